# kern_add_kernels.cmake: compiling .kern files ahead of time in a CMake project.
#
#   find_package(kern REQUIRED)
#   add_executable(app main.c)
#   kern_add_kernels(app kernels.kern [more.kern ...]
#                    [ARCH sm_80 sm_90 ...]   CUBINs for these GPUs, PTX for the newest
#                    [NO_CUDA]                CPU code only
#                    [CPU_FLAGS -march=x86-64-v3 ...]
#                    [DEBUG]                  bounds checks and assert in the kernels
#                    [LIBRARY kern::kern_static])   what to link (default kern::kern)
#
# For each FILE.kern, `kernc build` runs when the target is built (again when
# the file or anything it imports changes) and writes NAME.h and NAME.o (NAME:
# the file's base name) into a directory on the target's include path; the
# object and libkern are linked into the target. The program then calls
# NAME_KERNEL_launch(device, dims, args...) and needs no C compiler, no NVRTC
# and no cache at run time. See docs/aot.md.
include_guard(GLOBAL)

function(kern_add_kernels target)
  cmake_parse_arguments(PARSE_ARGV 1 KAK "NO_CUDA;DEBUG" "LIBRARY" "ARCH;CPU_FLAGS")
  if(NOT TARGET ${target})
    message(FATAL_ERROR "kern_add_kernels: '${target}' is not a target")
  endif()
  if(NOT TARGET kern::kernc)
    message(FATAL_ERROR "kern_add_kernels: kern::kernc is not defined; call find_package(kern) first")
  endif()
  if(NOT KAK_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "kern_add_kernels(${target}): name at least one .kern file")
  endif()

  set(options)
  if(KAK_ARCH)
    list(JOIN KAK_ARCH "," archs)
    list(APPEND options "--arch=${archs}")
  endif()
  if(KAK_NO_CUDA)
    list(APPEND options --no-cuda)
  endif()
  if(KAK_DEBUG)
    list(APPEND options --debug)
  endif()
  if(KAK_CPU_FLAGS)
    list(JOIN KAK_CPU_FLAGS " " flags)
    list(APPEND options "--cpu-flags=${flags}")
  endif()
  if(CMAKE_C_COMPILER)
    list(APPEND options "--cc=${CMAKE_C_COMPILER}")
  endif()

  set(outdir ${CMAKE_CURRENT_BINARY_DIR}/kern_kernels/${target})
  file(MAKE_DIRECTORY ${outdir})
  foreach(file IN LISTS KAK_UNPARSED_ARGUMENTS)
    get_filename_component(source ${file} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    get_filename_component(name ${file} NAME_WE)
    set(prefix ${outdir}/${name})
    add_custom_command(
      OUTPUT ${prefix}.o ${prefix}.h
      COMMAND kern::kernc build ${source} -o ${prefix} --depfile=${prefix}.d ${options}
      DEPENDS ${source} $<TARGET_FILE:kern::kernc>
      DEPFILE ${prefix}.d
      COMMENT "kernc build ${file}"
      VERBATIM)
    set_source_files_properties(${prefix}.o PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
    target_sources(${target} PRIVATE ${prefix}.o ${prefix}.h)
  endforeach()
  target_include_directories(${target} PRIVATE ${outdir})
  if(NOT KAK_LIBRARY)
    set(KAK_LIBRARY kern::kern)
  endif()
  target_link_libraries(${target} PRIVATE ${KAK_LIBRARY})
endfunction()
