// The system SQLite (Debian: libsqlite3-dev).
#include <sqlite3.h>
