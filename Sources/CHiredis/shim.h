// hiredis, Redis's C client (Debian: libhiredis-dev 0.14; headers in /usr/include/hiredis, pkg-config hiredis).
// Swift cannot call the variadic redisCommand: the bus uses redisCommandArgv and redisAppendCommandArgv.
#include <hiredis/hiredis.h>
