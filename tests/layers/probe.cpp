// A translation unit outside the library that includes one header, EMBER_PROBE_HEADER, with the
// usage requirements of one layer's target (tests/layers/CMakeLists.txt). It must compile for a
// public header and fail for another layer's private header.
#include EMBER_PROBE_HEADER

int ember_layer_probe = 0;
