/* Socket setup: big buffers so bursts from QEMU are not dropped in the
 * kernel, bind, connect so the kernel filters other senders; or, with
 * --rx-if, a packet socket bound to one interface. */
#define _GNU_SOURCE
#include "tools/peer/peer_sock.h"
#include "tools/peer/peer_run.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/sock_diag.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

void peer_addr_str(const struct sockaddr_in *a, char *buf)
{
    char ip[INET_ADDRSTRLEN];

    inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
    snprintf(buf, PEER_ADDR_STRLEN, "%s:%u", ip, ntohs(a->sin_port));
}

/* The FORCE variant passes net.core.[rw]mem_max when we have CAP_NET_ADMIN;
 * otherwise the plain one is capped there. */
static int set_buf(int fd, int force_opt, int opt, int bytes, int *granted)
{
    socklen_t len = sizeof(*granted);

    if (setsockopt(fd, SOL_SOCKET, force_opt, &bytes, sizeof(bytes)) != 0 &&
        setsockopt(fd, SOL_SOCKET, opt, &bytes, sizeof(bytes)) != 0)
        return -errno;
    if (getsockopt(fd, SOL_SOCKET, opt, granted, &len) != 0)
        return -errno;
    return 0;
}

/* The longest frame that is not a GSO frame on interface name: its MTU,
 * Ethernet's header and two VLAN tags (QinQ). */
static int frame_max(struct peer_sock *s, const char *name)
{
    struct ifreq ifr = {0};

    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
    if (ioctl(s->fd, SIOCGIFMTU, &ifr) != 0)
        return -errno;
    s->frame_max = (uint32_t)ifr.ifr_mtu + ETH_HLEN + 4u * PKT_VLANS_MAX;
    return 0;
}

/* packet(7): protocol 0 at socket() takes nothing until bind names the
 * interface and ETH_P_ALL; PACKET_IGNORE_OUTGOING (Linux 4.20) leaves out
 * what the host's own stack sends there (its ICMP errors to the guest)
 * and the socket's own frames (send --stream-file writes whole frames
 * onto the interface: bound, sendmmsg needs no address), so what is read
 * is what the interface received. */
static int packet_open(const struct peer_opts *o, struct peer_sock *s, char *err, size_t errlen)
{
    struct sockaddr_ll ll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL)};
    const char *step = "socket(AF_PACKET)";
    int one = 1, rc = 0;

    s->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
    if (s->fd < 0) {
        rc = -errno;
        snprintf(err, errlen, "--rx-if %s: %s: %s", o->rx_if, step, strerror(-rc));
        return rc;
    }
    ll.sll_ifindex = (int)if_nametoindex(o->rx_if);
    if (ll.sll_ifindex == 0) {
        step = "no such interface";
        rc = -errno;
    }
    if (rc == 0) {
        step = "SO_RCVBUF";
        rc = set_buf(s->fd, SO_RCVBUFFORCE, SO_RCVBUF, (int)o->sockbuf, &s->rcvbuf);
    }
    if (rc == 0) {
        step = "SO_SNDBUF";
        rc = set_buf(s->fd, SO_SNDBUFFORCE, SO_SNDBUF, (int)o->sockbuf, &s->sndbuf);
    }
    if (rc == 0 && setsockopt(s->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)) != 0) {
        step = "PACKET_IGNORE_OUTGOING";
        rc = -errno;
    }
    if (rc == 0 && bind(s->fd, (const struct sockaddr *)&ll, sizeof(ll)) != 0) {
        step = "bind";
        rc = -errno;
    }
    if (rc == 0) {
        step = "SIOCGIFMTU";
        rc = frame_max(s, o->rx_if);
    }
    if (rc != 0) {
        snprintf(err, errlen, "--rx-if %s: %s: %s", o->rx_if, step, strerror(-rc));
        close(s->fd);
        s->fd = -1;
    }
    return rc;
}

int peer_sock_open(const struct peer_opts *o, struct peer_sock *s, char *err, size_t errlen)
{
    socklen_t len = sizeof(s->local);
    char addr[PEER_ADDR_STRLEN] = "";
    const char *step;
    int rc;

    if (o->rx_if)
        return packet_open(o, s, err, errlen);
    s->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s->fd < 0) {
        rc = -errno;
        snprintf(err, errlen, "socket: %s", strerror(-rc));
        return rc;
    }
    step = "SO_RCVBUF";
    rc = set_buf(s->fd, SO_RCVBUFFORCE, SO_RCVBUF, (int)o->sockbuf, &s->rcvbuf);
    if (rc == 0) {
        step = "SO_SNDBUF";
        rc = set_buf(s->fd, SO_SNDBUFFORCE, SO_SNDBUF, (int)o->sockbuf, &s->sndbuf);
    }
    if (rc == 0) {
        step = "bind";
        peer_addr_str(&o->local, addr);
        if (bind(s->fd, (const struct sockaddr *)&o->local, sizeof(o->local)) != 0)
            rc = -errno;
    }
    if (rc == 0 && o->have_remote) {
        step = "connect";
        peer_addr_str(&o->remote, addr);
        if (connect(s->fd, (const struct sockaddr *)&o->remote, sizeof(o->remote)) != 0)
            rc = -errno;
    }
    if (rc == 0 && getsockname(s->fd, (struct sockaddr *)&s->local, &len) != 0) {
        step = "getsockname";
        rc = -errno;
    }
    if (rc != 0) {
        snprintf(err, errlen, "%s%s%s: %s", step, *addr ? " " : "", addr, strerror(-rc));
        close(s->fd);
        s->fd = -1;
    }
    return rc;
}

int peer_sock_drops(int fd, uint64_t *drops)
{
    uint32_t mem[SK_MEMINFO_VARS];
    socklen_t len = sizeof(mem);

    if (getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mem, &len) != 0)
        return -errno;
    if (len <= SK_MEMINFO_DROPS * sizeof(uint32_t))
        return -EOPNOTSUPP;
    *drops = mem[SK_MEMINFO_DROPS];
    return 0;
}

int peer_ready_file(const char *path, const char *local, char *err, size_t errlen)
{
    char tmp[4096];
    FILE *f;
    int rc = 0;

    if (snprintf(tmp, sizeof(tmp), "%s.tmp%d", path, (int)getpid()) >= (int)sizeof(tmp)) {
        snprintf(err, errlen, "ready file %s: path too long", path);
        return -ENAMETOOLONG;
    }
    f = fopen(tmp, "w");
    if (!f) {
        rc = -errno;
        snprintf(err, errlen, "ready file %s: %s", tmp, strerror(-rc));
        return rc;
    }
    fprintf(f, "{\"pid\":%d,\"local\":\"%s\"}\n", (int)getpid(), local);
    if (fclose(f) != 0)
        rc = -errno;
    else if (rename(tmp, path) != 0)
        rc = -errno;
    if (rc != 0) {
        snprintf(err, errlen, "ready file %s: %s", path, strerror(-rc));
        unlink(tmp);
    }
    return rc;
}

int peer_sock_send(struct peer_run *r, struct mmsghdr *msgs, uint32_t n)
{
    int rc = sendmmsg(r->sock->fd, msgs, n, 0);

    return rc < 0 ? -errno : rc;
}
