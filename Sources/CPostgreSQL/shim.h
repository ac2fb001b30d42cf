// libpq, PostgreSQL's C client (Debian: libpq-dev; headers in /usr/include/postgresql, pkg-config libpq).
#include <libpq-fe.h>
