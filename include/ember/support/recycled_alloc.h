// An allocator that recycles blocks of one size per thread: for the objects that every small eager
// call and every jit replay makes and drops (a tensor's TensorImpl, an output's Storage, each in
// its shared_ptr's control block), where glibc's malloc and free cost about 150 instructions a pair
// and a thread's free list a few (issue 40). Use:
// std::allocate_shared<T>(support::RecycledAlloc<T>{}, args...).
#pragma once
#include <cstddef>
#include <new>

namespace ember::support {

/// The freed blocks of `Size` bytes on this thread, linked through their first word, at most kMax
/// of them. A block freed on another thread joins that thread's list: every block is an
/// ::operator new block of Size bytes. During the thread's exit blocks are neither taken nor kept.
template <size_t Size>
class BlockFreeList {
 public:
  static constexpr int kMax = 64;

  static void* take() noexcept {
    Link* p = head_;
    if (!p) return nullptr;
    head_ = p->next;
    count_--;
    return p;
  }
  static bool give(void* p) noexcept {
    if (count_ >= kMax || gone_) return false;
    if (!owner_registered_) register_owner();
    Link* l = static_cast<Link*>(p);
    l->next = head_;
    head_ = l;
    count_++;
    return true;
  }

 private:
  struct Link {
    Link* next;
  };
  // Frees the thread's blocks at its exit. Made on the first give: the list itself is plain,
  // constant-initialised thread_locals (one %fs-relative access each, no guard).
  struct Owner {
    ~Owner() {
      while (Link* p = head_) {
        head_ = p->next;
        ::operator delete(p);
      }
      count_ = 0;
      gone_ = true;
    }
  };
  [[gnu::noinline]] static void register_owner() noexcept {
    thread_local Owner owner;
    (void)owner;
    owner_registered_ = true;
  }
  static_assert(Size >= sizeof(Link));
  static inline thread_local constinit Link* head_ = nullptr;
  static inline thread_local constinit int count_ = 0;
  static inline thread_local constinit bool owner_registered_ = false;
  static inline thread_local constinit bool gone_ = false;
};

/// A std allocator over BlockFreeList<sizeof(T)> for single objects (arrays go to ::operator new).
template <class T>
struct RecycledAlloc {
  using value_type = T;
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "over-aligned types not pooled");

  RecycledAlloc() = default;
  template <class U>
  RecycledAlloc(const RecycledAlloc<U>&) noexcept {}  // NOLINT: allocators convert implicitly
  T* allocate(size_t n) {
    if (n == 1)
      if (void* p = BlockFreeList<sizeof(T)>::take()) return static_cast<T*>(p);
    return static_cast<T*>(::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) noexcept {
    if (n == 1 && BlockFreeList<sizeof(T)>::give(p)) return;
    ::operator delete(p);
  }
  friend bool operator==(const RecycledAlloc&, const RecycledAlloc&) noexcept { return true; }
};

}  // namespace ember::support
