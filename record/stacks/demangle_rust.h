/* Rust symbol names as the Rust tools show them (rustc-demangle's
 * alternate form, which perf shows too): the legacy mangling
 * (_ZN...17h<hash>E) and v0 (_R..., RFC 2603), hash and crate
 * disambiguators left out, `.llvm.NNNN` suffixes dropped.
 */
#ifndef NUSKU_RECORD_DEMANGLE_RUST_H
#define NUSKU_RECORD_DEMANGLE_RUST_H

/* A demangled copy (malloc) of a Rust name, or NULL when name is not one
 * (a C++ name, a C name, or a malformed or too deeply nested one: the
 * names come from files a traced program chose, so input is bounded). */
char *nsk_demangle_rust(const char *name);

#endif
