// Loaded into flowstack with LD_PRELOAD by scripts/stopping.py: widens the window of
// libmicrohttpd 0.9.75's race between MHD_quiesce_daemon and its own worker threads.
//
// Quiescing marks each worker quiesced, then takes the listening socket out of that worker's
// epoll set itself, aborting the process when that fails; a worker that wakes in between takes it
// out first (daemon.c:5521-5532). Here an EPOLL_CTL_DEL of a listening socket made by any thread
// but libmicrohttpd's own ("MHD-…") waits 20 ms first, so under load a worker is nearly always
// first. A server that never hands libmicrohttpd a listening socket is not touched by it.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

int epoll_ctl(int epfd, int op, int fd, struct epoll_event *event)
{
    static int (*real)(int, int, int, struct epoll_event *);
    if (real == NULL) real = (int (*)(int, int, int, struct epoll_event *))dlsym(RTLD_NEXT, "epoll_ctl");
    if (op == EPOLL_CTL_DEL) {
        int listening = 0;
        socklen_t length = sizeof listening;
        char name[16] = "";
        pthread_getname_np(pthread_self(), name, sizeof name);
        if (strncmp(name, "MHD-", 4) != 0
            && getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) == 0 && listening) {
            usleep(20000);
        }
    }
    return real(epfd, op, fd, event);
}
