# kern_add_kernels.cmake: .kern files in a CMake project: compiled ahead of time
# (kern_add_kernels), or their source built into the program (kern_embed_sources).
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

# What both functions check first: a target, kernc, at least one file.
function(_kern_check_call fn target files)
  if(NOT TARGET ${target})
    message(FATAL_ERROR "${fn}: '${target}' is not a target")
  endif()
  if(NOT TARGET kern::kernc)
    message(FATAL_ERROR "${fn}: kern::kernc is not defined; call find_package(kern) first")
  endif()
  if(NOT files)
    message(FATAL_ERROR "${fn}(${target}): name at least one .kern file")
  endif()
endfunction()

# What both do last: the generated files' directory on the include path, libkern linked.
function(_kern_link target outdir library)
  target_include_directories(${target} PRIVATE ${outdir})
  if(NOT library)
    set(library kern::kern)
  endif()
  target_link_libraries(${target} PRIVATE ${library})
endfunction()

function(kern_add_kernels target)
  cmake_parse_arguments(PARSE_ARGV 1 KAK "NO_CUDA;DEBUG" "LIBRARY" "ARCH;CPU_FLAGS")
  _kern_check_call(kern_add_kernels ${target} "${KAK_UNPARSED_ARGUMENTS}")

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
  _kern_link(${target} ${outdir} "${KAK_LIBRARY}")
endfunction()

# kern_embed_sources: a module's source built into a program, compiled at run time.
#
#   kern_embed_sources(app kernels.kern [more.kern ...] [LIBRARY kern::kern_static])
#
# For each FILE.kern, `kernc embed` runs when the target is built (again when
# the file or anything it imports changes), from the calling CMakeLists.txt's
# directory (diagnostics name the module by its path relative to it), and
# writes NAME_source.h and NAME_source.c (NAME: the file's base name) into a
# directory on the target's include path; they are compiled into the target,
# which is linked with libkern. The program calls NAME_source_load() for the
# module: it needs no .kern file at run time, and compiles the kernels for the
# machine it runs on (a C compiler or NVRTC then, cached as usual). To need no
# compiler at run time, use kern_add_kernels instead. See docs/aot.md.
function(kern_embed_sources target)
  cmake_parse_arguments(PARSE_ARGV 1 KES "" "LIBRARY" "")
  _kern_check_call(kern_embed_sources ${target} "${KES_UNPARSED_ARGUMENTS}")
  set(outdir ${CMAKE_CURRENT_BINARY_DIR}/kern_sources/${target})
  file(MAKE_DIRECTORY ${outdir})
  foreach(file IN LISTS KES_UNPARSED_ARGUMENTS)
    get_filename_component(source ${file} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    file(RELATIVE_PATH relative ${CMAKE_CURRENT_SOURCE_DIR} ${source})
    get_filename_component(name ${file} NAME_WE)
    set(prefix ${outdir}/${name}_source)
    add_custom_command(
      OUTPUT ${prefix}.c ${prefix}.h
      COMMAND kern::kernc embed ${relative} -o ${prefix} --depfile=${prefix}.d
      WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
      DEPENDS ${source} $<TARGET_FILE:kern::kernc>
      DEPFILE ${prefix}.d
      COMMENT "kernc embed ${file}"
      VERBATIM)
    target_sources(${target} PRIVATE ${prefix}.c ${prefix}.h)
  endforeach()
  _kern_link(${target} ${outdir} "${KES_LIBRARY}")
endfunction()
