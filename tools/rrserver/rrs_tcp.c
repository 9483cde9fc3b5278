/* TCP_RR: per connection, every req bytes of the stream owe an answer of
 * resp bytes; answers go out as the socket takes them (epoll). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "tools/rrserver/rrs.h"

struct rrs_conn {
    int fd;
    struct rrs_stream in; /* the request being read, answers not started */
    uint32_t out_left;    /* bytes of the answer being sent */
};

static struct rrs_conn rrs_conns[RRS_SESS_MAX];
static uint8_t rrs_buf[65536];
_Static_assert(sizeof(rrs_buf) <= UINT32_MAX, "a read's count fits rrs_stream_add's n");
static const uint8_t rrs_zeros[RRS_MSG_MAX];

static void rrs_close(int ep, struct rrs_conn *c)
{
    epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    c->fd = -1;
}

/* Sends what is owed; false when the connection is gone. */
static bool rrs_flush(const struct rrs_opts *o, int ep, struct rrs_conn *c, struct rrs_stats *st)
{
    while (c->out_left || c->in.owed) {
        if (!c->out_left) {
            c->in.owed--;
            c->out_left = o->resp;
        }
        ssize_t w = send(c->fd, rrs_zeros, c->out_left, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                struct epoll_event ev = {EPOLLIN | EPOLLOUT, {.ptr = c}};
                return epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev) == 0;
            }
            st->io_errors++;
            return false;
        }
        c->out_left -= (uint32_t)w;
        st->resp_bytes += (uint64_t)w;
        if (!c->out_left)
            st->transactions++;
    }
    struct epoll_event ev = {EPOLLIN, {.ptr = c}};
    return epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev) == 0;
}

/* Reads what arrived; false at the peer's close or an error. */
static bool rrs_read(const struct rrs_opts *o, struct rrs_conn *c, struct rrs_stats *st)
{
    for (;;) {
        ssize_t n = recv(c->fd, rrs_buf, sizeof(rrs_buf), MSG_DONTWAIT);
        if (n == 0)
            return false;
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return true;
            st->io_errors++;
            return false;
        }
        rrs_stream_add(o, &c->in, (uint32_t)n, st);
    }
}

static void rrs_accept(int lfd, int ep, struct rrs_stats *st)
{
    for (;;) {
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0)
            return;
        struct rrs_conn *c = NULL;
        for (unsigned i = 0; i < RRS_SESS_MAX && !c; i++)
            if (rrs_conns[i].fd < 0)
                c = &rrs_conns[i];
        struct epoll_event ev = {EPOLLIN, {.ptr = c}};
        int one = 1;
        if (!c || setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ||
            epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev)) {
            st->refused++;
            close(fd);
            continue;
        }
        *c = (struct rrs_conn){fd, {0, 0}, 0};
        st->sessions++;
    }
}

int rrs_run_tcp(const struct rrs_opts *o, int lfd, struct rrs_stats *st)
{
    for (unsigned i = 0; i < RRS_SESS_MAX; i++)
        rrs_conns[i].fd = -1;
    int ep = epoll_create1(0);
    struct epoll_event lev = {EPOLLIN, {.ptr = NULL}};
    if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &lev))
        return -errno;
    struct epoll_event evs[64];
    while (!rrs_stop) {
        int n = epoll_wait(ep, evs, 64, 100);
        if (n < 0 && errno != EINTR)
            return -errno;
        for (int i = 0; i < n; i++) {
            struct rrs_conn *c = evs[i].data.ptr;
            if (!c) {
                rrs_accept(lfd, ep, st);
                continue;
            }
            bool alive = !(evs[i].events & EPOLLIN) || rrs_read(o, c, st);
            if (alive)
                alive = rrs_flush(o, ep, c, st);
            if (!alive)
                rrs_close(ep, c);
        }
    }
    close(ep);
    return 0;
}
