#ifndef CSQLITE_SHIM_H
#define CSQLITE_SHIM_H
#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro casting -1 to a function pointer: Swift cannot import it.
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }

// SQLite's memory statistics are on in Debian's build (SQLITE_DEFAULT_MEMSTATUS unset): then
// every allocation SQLite makes takes one global mutex. sqlite3_config is variadic (Swift
// cannot call it); this turns them off, and returns SQLITE_MISUSE once the library is in use.
static inline int csqlite_disable_memory_statistics(void) { return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); }
#endif
