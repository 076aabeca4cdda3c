# Compiler flags shared by every batchdyn target, and the lane instruction sets (ISAs) the
# project is compiled for.
#
#   batchdyn_warnings  warnings (-Werror with BATCHDYN_WERROR), sanitizers; no -march
#   batchdyn_options   batchdyn_warnings + -march=native when BATCHDYN_NATIVE is ON
#
# The per-ISA test targets (tests/CMakeLists.txt) take batchdyn_warnings plus the flags of
# batchdyn_isa_flags(), so every lane ISA compiles warning-clean on any x86-64 host.
include(CheckCXXSourceCompiles)

add_library(batchdyn_warnings INTERFACE)
target_compile_options(batchdyn_warnings INTERFACE -Wall -Wextra -Wpedantic)
# GCC 12 reports -Wrestrict false positives inside std::string concatenation (GCC bug 105329).
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(batchdyn_warnings INTERFACE -Wno-restrict)
endif()
if(BATCHDYN_WERROR)
  target_compile_options(batchdyn_warnings INTERFACE -Werror)
endif()
if(BATCHDYN_FUZZ)
  # libFuzzer needs Clang; every target (the library included) gets coverage instrumentation and
  # the sanitizers; fuzz/ links the fuzzer's main.
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "BATCHDYN_FUZZ needs Clang (Debian's clang and libclang-rt-14-dev): configure with CXX=clang++")
  endif()
  target_compile_options(batchdyn_warnings INTERFACE -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                                                     -fno-sanitize-recover=undefined)
  target_link_options(batchdyn_warnings INTERFACE -fsanitize=address,undefined)
endif()
if(BATCHDYN_SANITIZE)
  target_compile_options(batchdyn_warnings INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer
                                                     -fno-sanitize-recover=undefined)
  # ASan instrumentation makes GCC 12 report maybe-uninitialized false positives inside
  # xsimd's sin/cos range reduction (xsimd_rem_pio2.hpp), inlined into our code, and
  # array-bounds ones on Vec3::operator[] (an index of -2147483647 on a path no caller takes,
  # Force::operator[] inlined into the singular-joint check).
  target_compile_options(batchdyn_warnings INTERFACE -Wno-maybe-uninitialized -Wno-array-bounds)
  target_link_options(batchdyn_warnings INTERFACE -fsanitize=address,undefined)
endif()

# GCC 12.1 and 12.2 report "'__Y' may be used uninitialized" (-Wmaybe-uninitialized; at other
# optimisation levels, e.g. under the sanitizers, "'__Y' is used uninitialized",
# -Wuninitialized) from inside their own AVX-512 intrinsic headers: avx512fintrin.h builds the
# "don't care" merge operand of masked builtins as `__m512d __Y = __Y;` (_mm512_undefined_pd
# and friends), and the warning fires wherever such an intrinsic is inlined (Eigen's and
# xsimd's AVX-512 code). GCC bug 105593, fixed in GCC 12.3. Only that warning, only those
# compilers, only targets compiled with AVX-512 enabled.
function(batchdyn_avx512_header_workaround target scope)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12
     AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 12.3)
    target_compile_options(${target} ${scope} -Wno-maybe-uninitialized -Wno-uninitialized)
  endif()
endfunction()

# Compiler flags of one lane ISA: sse2 (the x86-64 baseline, what BATCHDYN_NATIVE=OFF gives),
# avx2 (with FMA), avx512 (F, DQ, BW, VL: Skylake-SP and later, Zen 4).
function(batchdyn_isa_flags isa out)
  if(isa STREQUAL "sse2")
    set(flags -msse2)
  elseif(isa STREQUAL "avx2")
    set(flags -mavx2 -mfma)
  elseif(isa STREQUAL "avx512")
    set(flags -mavx2 -mfma -mavx512f -mavx512dq -mavx512bw -mavx512vl)
  else()
    message(FATAL_ERROR "unknown lane ISA '${isa}' (sse2, avx2, avx512)")
  endif()
  set(${out} ${flags} PARENT_SCOPE)
endfunction()

# Adds the compile options after `result` to the INTERFACE of `target` when the compiler
# accepts them together (`result`, a cache variable, says whether it did); otherwise nothing.
function(batchdyn_add_flags_if_supported target result)
  string(REPLACE ";" " " CMAKE_REQUIRED_FLAGS "${ARGN}")
  check_cxx_source_compiles("int main() { return 0; }" ${result})
  if(${result})
    target_compile_options(${target} INTERFACE ${ARGN})
  endif()
endfunction()

add_library(batchdyn_options INTERFACE)
target_link_libraries(batchdyn_options INTERFACE batchdyn_warnings)
# GCC copies a Motion or Force of lanes (6 vectors: 192 bytes for AVX2 doubles) that it cannot
# keep in registers with a call to memcpy, and fills small lane arrays with a call to memset,
# inside the kernels' sweeps (PV-OSIMr's chain propagators, LCABA's backward sweep, ABA's first
# forward sweep). Copies and fills of a known size up to 512 bytes become inline vector moves;
# larger or unknown sizes still call the C library. Measured: kernels 3-8 % faster. x86 GCC only; other compilers keep their defaults.
batchdyn_add_flags_if_supported(batchdyn_options BATCHDYN_HAS_INLINE_COPY_FLAGS
                                -mmemcpy-strategy=vector_loop:512:noalign,libcall:-1:noalign
                                -mmemset-strategy=vector_loop:512:noalign,libcall:-1:noalign)
# Those inline copies, and every plain copy of a lane struct (a Vec3 of ground normals, a
# Motion), use GCC's default 256-bit moves even with AVX-512: a copy written as two 256-bit
# stores and read back by one 512-bit load cannot be store-forwarded, and the load waits for
# the stores to retire (a profile of the contact step put 11 % of the contact kernel on one
# such load). GCC 12's move-max / store-max let copies use the widest registers the
# target has; unlike -mprefer-vector-width=512 they leave the loops' vectorisation alone.
# Without AVX-512 they change nothing.
batchdyn_add_flags_if_supported(batchdyn_options BATCHDYN_HAS_WIDE_COPY_FLAGS -mmove-max=512 -mstore-max=512)
if(BATCHDYN_NATIVE)
  target_compile_options(batchdyn_options INTERFACE -march=native)
  set(CMAKE_REQUIRED_FLAGS -march=native)
  check_cxx_source_compiles("#ifndef __AVX512F__\n#error no AVX-512\n#endif\nint main() { return 0; }"
                            BATCHDYN_NATIVE_HAS_AVX512)
  unset(CMAKE_REQUIRED_FLAGS)
  if(BATCHDYN_NATIVE_HAS_AVX512)
    batchdyn_avx512_header_workaround(batchdyn_options INTERFACE)
  endif()
endif()

# The lane ISA of the native build itself (batchdyn_options), when it is exactly one of those
# batchdyn_isa_flags() knows: tests/ then needs no separate per-ISA copy for it, since the main
# test executable compiles and runs the same lane tests for that ISA under the same warnings.
# Empty when the host's lanes match none of them exactly (e.g. SSE4 only, or AVX-512F without
# DQ/BW/VL): every ISA then gets its copy.
set(BATCHDYN_NATIVE_LANE_ISA "")
if(NOT BATCHDYN_NATIVE)
  set(BATCHDYN_NATIVE_LANE_ISA sse2)  # x86-64's baseline: xsimd's SSE2 lanes
else()
  set(CMAKE_REQUIRED_FLAGS -march=native)
  check_cxx_source_compiles("#if !(defined(__AVX512F__) && defined(__AVX512DQ__) && defined(__AVX512BW__) && defined(__AVX512VL__))\n#error\n#endif\nint main() { return 0; }"
                            BATCHDYN_NATIVE_IS_AVX512)
  check_cxx_source_compiles("#if !(defined(__AVX2__) && defined(__FMA__)) || defined(__AVX512F__)\n#error\n#endif\nint main() { return 0; }"
                            BATCHDYN_NATIVE_IS_AVX2)
  unset(CMAKE_REQUIRED_FLAGS)
  if(BATCHDYN_NATIVE_IS_AVX512)
    set(BATCHDYN_NATIVE_LANE_ISA avx512)
  elseif(BATCHDYN_NATIVE_IS_AVX2)
    set(BATCHDYN_NATIVE_LANE_ISA avx2)
  endif()
endif()
