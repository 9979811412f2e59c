# fuzz.cmake: the libFuzzer targets (tests/fuzz/fuzz_*.c), built when
# KERN_FUZZ=ON and the compiler is clang. `make fuzz` configures its own build
# directory (build-fuzz) with this on and runs tests/fuzz/run.sh there.
#
# Requires: kern_obj and kern_static, defined before this file is included.
# Produces: fuzz_frontend, fuzz_codegen, fuzz_module. Breaks: with KERN_FUZZ on,
# libkern itself is compiled with coverage, ASan and UBSan, so everything that
# links it in that build directory is instrumented too.

option(KERN_FUZZ "Build the libFuzzer targets (clang only)" OFF)

if(KERN_FUZZ AND NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
  message(WARNING "KERN_FUZZ needs clang (libFuzzer); the fuzz targets are skipped")
elseif(KERN_FUZZ)
  # -O2 keeps the executions per second up; recovery off so UBSan findings are
  # crashes libFuzzer saves, not log lines it ignores.
  set(KERN_FUZZ_SAN -fsanitize=address,undefined -fno-sanitize-recover=all
      -fno-omit-frame-pointer -O2 -g)
  target_compile_options(kern_obj PRIVATE -fsanitize=fuzzer-no-link ${KERN_FUZZ_SAN})
  target_link_options(kern_static INTERFACE -fsanitize=address,undefined)
  target_link_options(kern_shared PRIVATE -fsanitize=address,undefined)

  foreach(name fuzz_frontend fuzz_codegen fuzz_module)
    add_executable(${name} ${CMAKE_SOURCE_DIR}/tests/fuzz/${name}.c
      ${CMAKE_SOURCE_DIR}/tests/fuzz/fuzz_util.c)
    target_link_libraries(${name} PRIVATE kern_static)
    target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR}/support ${CMAKE_SOURCE_DIR}/frontend
      ${CMAKE_SOURCE_DIR}/codegen ${CMAKE_SOURCE_DIR}/runtime ${CMAKE_SOURCE_DIR}/stdlib)
    target_compile_options(${name} PRIVATE ${KERN_WARN} -fsanitize=fuzzer ${KERN_FUZZ_SAN})
    target_link_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
    target_compile_definitions(${name} PRIVATE _GNU_SOURCE
      KERN_TESTS_DIR="${CMAKE_SOURCE_DIR}/tests")
  endforeach()
endif()
