// Glibc's Swift module does not export epoll, eventfd, timerfd or malloc_trim; this header-only module does.
// Nothing here is compiled: the declarations come straight from the system headers.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <signal.h>
#include <malloc.h>
