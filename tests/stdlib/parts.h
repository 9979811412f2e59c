/* parts.h: the stdlib files in the order generated code pastes them
 * (cmake/embed_stdlib.cmake: kern_abi.h, then STDLIB_PARTS), for the tests
 * that compile the stdlib text themselves. test_stdlib_table.c checks that this
 * list and the embedded text agree. */
#ifndef KT_STDLIB_PARTS_H
#define KT_STDLIB_PARTS_H

#define KT_STDLIB_NPARTS 11
static const char *const kt_stdlib_parts[KT_STDLIB_NPARTS] = {"stdlib/kern_abi.h",
                                                              "stdlib/kern_builtins.h",
                                                              "stdlib/kern_libm.h",
                                                              "stdlib/kern_math.h",
                                                              "stdlib/kern_spatial.h",
                                                              "stdlib/kern_transform.h",
                                                              "stdlib/kern_spatial_algebra.h",
                                                              "stdlib/kern_linalg.h",
                                                              "stdlib/kern_noise.h",
                                                              "stdlib/kern_vecn.h",
                                                              "stdlib/kern_quatn.h"};

#endif
