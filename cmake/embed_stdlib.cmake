# Writes OUT: C strings holding stdlib/kern_abi.h, stdlib/kern_builtins.h,
# stdlib/kern_tiles.h and the kern modules the library ships (runtime/kern/).
function(embed var file)
  file(READ ${file} text HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," text "${text}")
  file(APPEND ${OUT} "const char ${var}[] = {${text} 0};\n")
endfunction()
file(WRITE ${OUT} "/* generated from stdlib/ by cmake/embed_stdlib.cmake */\n")
embed(rt_stdlib_abi_h ${SRC}/kern_abi.h)
embed(rt_stdlib_builtins_h ${SRC}/kern_builtins.h)
embed(rt_stdlib_tiles_h ${SRC}/kern_tiles.h)
embed(rt_kern_matmul ${SRC}/../runtime/kern/matmul.kern)
