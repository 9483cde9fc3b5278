/* lwIP options for vnperf: bare metal, polled, one thread (NO_SYS). */
#ifndef VN_LWIPOPTS_H
#define VN_LWIPOPTS_H

/* ---- system */
#define NO_SYS                 1
#define SYS_LIGHTWEIGHT_PROT   0
#define LWIP_NETCONN           0
#define LWIP_SOCKET            0

/* ---- memory: lwIP's own pools, sized for many sessions */
#define MEM_ALIGNMENT          8
#define MEM_SIZE               (4 * 1024 * 1024)
#define MEMP_NUM_PBUF          1024
#define MEMP_NUM_TCP_PCB       64
#define MEMP_NUM_TCP_SEG       1024
#define MEMP_NUM_UDP_PCB       16
#define PBUF_POOL_SIZE         1024

/* ---- protocols */
#define LWIP_ARP               1
#define LWIP_ETHERNET          1
#define LWIP_IPV4              1
#define LWIP_IPV6              0
#define LWIP_ICMP              1
#define LWIP_UDP               1
#define LWIP_TCP               1
#define LWIP_DHCP              1
#define LWIP_DNS               0
#define LWIP_IGMP              0
#define LWIP_RAW               0

/* ---- TCP: large windows for stream tests */
#define TCP_MSS                1460
#define TCP_WND                (32 * TCP_MSS)
#define TCP_SND_BUF            (32 * TCP_MSS)
#define TCP_SND_QUEUELEN       (4 * TCP_SND_BUF / TCP_MSS)

/* ---- link: headroom for the virtio-net header in front of every frame */
#define PBUF_LINK_ENCAPSULATION_HLEN 12

/* ---- stats and debug off on the fast path */
#define LWIP_STATS             0
#define LWIP_NETIF_STATUS_CALLBACK 0
#define LWIP_NETIF_LINK_CALLBACK   0

#endif
