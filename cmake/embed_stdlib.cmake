# Writes OUT: C strings holding stdlib/kern_abi.h, the rest of the stdlib,
# stdlib/kern_tiles.h and kern_mmloop.h (tiled code's part: macros and templates, pasted
# into every module after the rest) and the kern
# modules the library ships (runtime/kern/).
# rt_stdlib_builtins_h is kern_builtins.h followed by the parts that continue
# it (each guarded, each starting where the one before ends), so generated
# code pastes one text and needs no include path. Tests that compile the
# stdlib on their own read the same list: tests/stdlib/parts.h.
set(STDLIB_PARTS kern_builtins.h kern_libm.h kern_math.h kern_spatial.h kern_transform.h
    kern_spatial_algebra.h kern_linalg.h kern_noise.h kern_vecn.h kern_quatn.h)
function(embed var)
  set(hex "")
  foreach(file ${ARGN})
    file(READ ${SRC}/${file} text HEX)
    string(APPEND hex "${text}0a")
  endforeach()
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," hex "${hex}")
  file(APPEND ${OUT} "const char ${var}[] = {${hex} 0};\n")
endfunction()
file(WRITE ${OUT} "/* generated from stdlib/ by cmake/embed_stdlib.cmake */\n")
embed(rt_stdlib_abi_h kern_abi.h)
embed(rt_stdlib_builtins_h ${STDLIB_PARTS})
embed(rt_stdlib_tiles_h kern_tiles.h kern_mmloop.h)
embed(rt_kern_matmul ../runtime/kern/matmul.kern)
embed(rt_kern_sort ../runtime/kern/sort.kern.in)
