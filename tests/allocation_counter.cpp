// Heap-allocation counting for test_no_allocation.cpp: replacement global operator new /
// delete (plain, array and over-aligned forms) and, outside sanitizer builds, malloc, calloc,
// realloc and the aligned C allocators (interposed: this executable's definitions win over
// glibc's, and forward to glibc's own __libc_* entry points). So an allocation by std
// containers, Eigen, oneTBB or any C code is seen.
// In its own translation unit so the compiler does not pair these definitions with inlined
// library code and warn about a new/free mismatch.
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace {
std::atomic<long> allocations{0};
void count() { allocations.fetch_add(1, std::memory_order_relaxed); }
}  // namespace

long heap_allocation_count() { return allocations.load(std::memory_order_relaxed); }

#if defined(__SANITIZE_ADDRESS__)
#define BATCHDYN_COUNT_MALLOC 0  // AddressSanitizer owns malloc; operator new is still counted
#else
#define BATCHDYN_COUNT_MALLOC 1
extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
void __libc_free(void*);

void* malloc(std::size_t size) {
  count();
  return __libc_malloc(size);
}
void* calloc(std::size_t n, std::size_t size) {
  count();
  return __libc_calloc(n, size);
}
void* realloc(void* p, std::size_t size) {
  count();
  return __libc_realloc(p, size);
}
void* memalign(std::size_t alignment, std::size_t size) {
  count();
  return __libc_memalign(alignment, size);
}
void* aligned_alloc(std::size_t alignment, std::size_t size) {
  count();
  return __libc_memalign(alignment, size);
}
int posix_memalign(void** out, std::size_t alignment, std::size_t size) {
  count();
  void* p = __libc_memalign(alignment, size);
  if (!p) return 12;  // ENOMEM
  *out = p;
  return 0;
}
void free(void* p) { __libc_free(p); }
}
#endif

namespace {
void* allocate(std::size_t size, std::size_t alignment) {
  count();
  if (size == 0) size = 1;
  const bool aligned = alignment > alignof(std::max_align_t);
#if BATCHDYN_COUNT_MALLOC  // glibc's own entry points: not counted a second time by malloc() above
  void* p = aligned ? __libc_memalign(alignment, size) : __libc_malloc(size);
#else
  void* p = aligned ? std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment) : std::malloc(size);
#endif
  if (!p) throw std::bad_alloc();
  return p;
}
void release(void* p) { std::free(p); }
}  // namespace

void* operator new(std::size_t size) { return allocate(size, alignof(std::max_align_t)); }
void* operator new[](std::size_t size) { return allocate(size, alignof(std::max_align_t)); }
void* operator new(std::size_t size, std::align_val_t a) { return allocate(size, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t size, std::align_val_t a) { return allocate(size, static_cast<std::size_t>(a)); }
void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, std::size_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t) noexcept { release(p); }
void operator delete(void* p, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { release(p); }
// The nothrow forms (std::stable_sort's temporary buffer, for one): replaced too, so that under
// AddressSanitizer (which otherwise provides them) they pair with the deletes above.
namespace {
void* allocate_or_null(std::size_t size, std::size_t alignment) noexcept {
  try {
    return allocate(size, alignment);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
}  // namespace
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return allocate_or_null(size, alignof(std::max_align_t)); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return allocate_or_null(size, alignof(std::max_align_t)); }
void* operator new(std::size_t size, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate_or_null(size, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t size, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate_or_null(size, static_cast<std::size_t>(a));
}
void operator delete(void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { release(p); }
