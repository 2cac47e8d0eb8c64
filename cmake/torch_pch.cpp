// The target that compiles the precompiled <torch/torch.h> of cmake/torch_pch.cmake: its header
// is what the other libtorch units reuse; the program does nothing.
int main() { return 0; }
