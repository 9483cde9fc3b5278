/* lwIP configuration for vnperf: one thread, no OS (NO_SYS), polled
 * virtio-net, raw API only. Sized for iperf with a few TCP sessions and
 * request/response with up to 128 sessions (sessions= allows 128). */
#ifndef VN_LWIPOPTS_H
#define VN_LWIPOPTS_H

/* ---- system: no threads, no interrupts, nothing to lock */
#define NO_SYS               1
#define SYS_LIGHTWEIGHT_PROT 0
#define LWIP_TIMERS          1
#define LWIP_NETCONN         0
#define LWIP_SOCKET          0

/* The kernel's physical memory module owns mem_init (kernel/mem.h);
 * lwIP's heap init of the same name is renamed wherever lwIP is built. */
#define mem_init lwip_heap_init

/* ---- memory: lwIP's pools in .bss, its heap from mem_alloc_dma() at
 * net_init (a 4 MiB heap in .bss would push the image end past what
 * OVMF leaves free below 8 MiB). Both are identity mapped, so pbuf memory
 * can be handed to the device as is. */
#define MEM_ALIGNMENT 8
#define MEM_SIZE      (4 * 1024 * 1024)
/* room for lwIP's own block headers at both ends of the heap */
#define NET_LWIP_HEAP_BYTES (MEM_SIZE + 1024)
extern void *net_lwip_heap;
#define LWIP_RAM_HEAP_POINTER   net_lwip_heap
#define MEMP_NUM_PBUF           8192 /* PBUF_REF/ROM: zero-copy TX payload */
#define MEMP_NUM_UDP_PCB        136
#define MEMP_NUM_TCP_PCB        136
#define MEMP_NUM_TCP_PCB_LISTEN 8
#define MEMP_NUM_TCP_SEG        8192 /* all sessions' queued segments */
#define MEMP_NUM_REASSDATA      8
/* Without LWIP_NETIF_TX_SINGLE_PBUF each IP fragment we send references
 * the datagram until the device is done with it (ip4_frag.c,
 * ip_frag_alloc_pbuf_custom_ref): a TX ring's worth (lwIP's 15 held one
 * 20000-byte rr answer and lost the next one's fragments). */
#define MEMP_NUM_FRAG_PBUF 1024
/* Every session's first segment to a host not yet in the ARP table waits
 * for the one reply. lwIP keeps ARP_QUEUE_LEN per address and drops the
 * oldest beyond it (etharp.c, etharp_query; default 3): 8 iperf streams
 * connecting at once lost 5 SYN-ACKs, and those streams started 1 s
 * late, on the host's SYN retransmit. */
#define MEMP_NUM_ARP_QUEUE MEMP_NUM_TCP_PCB
#define ARP_QUEUE_LEN      MEMP_NUM_TCP_PCB
/* RX copies when the zero-copy pool is out: out-of-order data of every
 * stream holds pbufs until the hole is filled (docs/lwip.md). */
#define PBUF_POOL_SIZE    2048
#define PBUF_POOL_BUFSIZE 1536

/* The driver writes the virtio-net header in front of every TX frame,
 * and netif_svlan= an 802.1ad tag in front of lwIP's 802.1Q one: leave
 * that room in every pbuf lwIP allocates for output, so the frame goes
 * out without a copy. TCP payload written without TCP_WRITE_FLAG_COPY
 * stays where the app keeps it (PBUF_ROM after the header pbuf): the
 * netif hands the device a descriptor chain (docs/lwip.md). */
#define PBUF_LINK_ENCAPSULATION_HLEN 24 /* VNET_HDR_ROOM, a QinQ service tag (netif_svlan=) */
#define LWIP_NETIF_TX_SINGLE_PBUF    0
#define LWIP_SUPPORT_CUSTOM_PBUF     1 /* zero-copy RX */

/* ---- protocols */
#define LWIP_IPV4 1
/* Dual stack (docs/lwip.md, "IPv6"): ND, ICMPv6, MLD for the
 * solicited-node groups ND needs, fragmentation both ways; addresses are
 * static (ip6=) or link-local, so no SLAAC, no DHCPv6, no DAD (the guest
 * sets its addresses preferred: nothing waits a second). */
#define LWIP_IPV6                     1
#define LWIP_IPV6_NUM_ADDRESSES       2 /* link-local, ip6= */
#define LWIP_IPV6_AUTOCONFIG          0
#define LWIP_IPV6_DHCP6               0
#define LWIP_IPV6_DUP_DETECT_ATTEMPTS 0
#define LWIP_IPV6_SEND_ROUTER_SOLICIT 0
#define LWIP_IPV6_MLD                 1
#define LWIP_IPV6_FRAG                1
#define LWIP_IPV6_REASS               1
/* 64-bit pointers do not fit the 8-byte fragment header reassembly
 * reuses (ip6_frag.c asserts it): it keeps a copy instead. */
#define IPV6_FRAG_COPYHEADER 1
#define LWIP_ND6_QUEUEING    1
/* As ARP's queue: every session's first segment waits for the one
 * neighbour advertisement. */
#define MEMP_NUM_ND6_QUEUE            MEMP_NUM_TCP_PCB
#define LWIP_ND6_NUM_NEIGHBORS        32
#define LWIP_ICMP6                    1
#define LWIP_IPV6_SCOPES              0 /* link-local peers are not taken (ip6=, dst_ip6=) */
#define LWIP_ARP                      1
#define ARP_TABLE_SIZE                32
#define ARP_QUEUEING                  1
#define ETHARP_SUPPORT_STATIC_ENTRIES 1
#define LWIP_ICMP                     1
#define LWIP_RAW                      0
#define LWIP_IGMP                     0
#define LWIP_DNS                      0
#define LWIP_AUTOIP                   0
#define LWIP_DHCP                     1
#define DHCP_DOES_ARP_CHECK           0 /* no 1 s wait for a conflict check */
#define IP_REASSEMBLY                 1
#define IP_FRAG                       1
#define IP_REASS_MAX_PBUFS            64 /* a 65000-byte rr datagram: 45 fragments */
#define LWIP_UDP                      1
#define LWIP_TCP                      1
#define LWIP_SINGLE_NETIF             0 /* fwd has two devices */
#define LWIP_HAVE_LOOPIF              0
#define LWIP_NETIF_LOOPBACK           0

/* ---- VLAN: netif_vlan= puts one 802.1Q tag on every frame lwIP sends
 * and takes only frames of that VID (docs/lwip.md, "VLAN"). lwIP adds the
 * tag in ethernet_output from the set hook's TCI (PBUF_LINK_HLEN is 18
 * with the hook defined here: opt.h) and asks the check hook about every
 * tagged frame in ethernet_input (net/netif_vlan.c). */
#define ETHARP_SUPPORT_VLAN                          1
#define LWIP_HOOK_FILENAME                           "lwiphooks.h"
#define LWIP_HOOK_VLAN_SET(netif, p, src, dst, type) netif_vlan_set_hook(netif, p, src, dst, type)
#define LWIP_HOOK_VLAN_CHECK(netif, eth, vlan)       netif_vlan_check_hook(netif, eth, vlan)

/* ---- TCP: windows for 10 Gbit/s-class streams over a virtio ring
 * (docs/lwip.md): 4 MiB each way covers a few ms of round trip under
 * TCG. TCP_MSS is what we advertise; with TSO the netif raises a
 * connection's send MSS (net_tcp_offload). */
#define TCP_MSS          1460
#define LWIP_WND_SCALE   1
#define TCP_RCV_SCALE    7 /* 0xffff << 7: 8 MiB */
#define TCP_WND          (4 * 1024 * 1024)
#define TCP_SND_BUF      (4 * 1024 * 1024)
#define TCP_SND_QUEUELEN (4 * TCP_SND_BUF / TCP_MSS)
#define TCP_SNDLOWAT     (4 * TCP_MSS) /* netconn only; lwIP wants it below 64 KiB */
/* After a loss the host keeps sending: what follows the hole is kept
 * (tcp_receive drops the newest beyond this) and told to the host with
 * SACK blocks, so that it resends only the hole (docs/lwip.md). */
#define TCP_OOSEQ_MAX_PBUFS 256
#define TCP_QUEUE_OOSEQ     1
/* lwIP's retransmit timeout counts in ticks of 2 * TCP_TMR_INTERVAL and
 * settles at about 3 ticks on a sub-tick round trip: 1.5 s with the
 * default 250 ms, 0.3 s here (Linux: 0.2 s at least). A stream whose peer
 * drops what follows a hole and sends fewer than 3 duplicate ACKs (passt)
 * no longer waits that long: net_tlp.c probes first (docs/lwip.md). */
#define TCP_TMR_INTERVAL   50
#define LWIP_TCP_SACK_OUT  1
#define LWIP_TCP_KEEPALIVE 0
/* One pointer per pcb for the tail-loss probe's state (net_tlp.c), one
 * for the iperf server's half-open connections (apps/iperf_syn.c). */
#define LWIP_TCP_PCB_NUM_EXT_ARGS 2
#define TCP_LISTEN_BACKLOG        0
/* lwIP's TCP sanity checks assume received data sits in PBUF_POOL and ask
 * for a pool as large as the window; ours sits in the RX ring's buffers
 * (zero-copy), the pool only takes the overflow. */
#define LWIP_DISABLE_TCP_SANITY_CHECKS 1

/* ---- checksums: one routine for the whole image (kernel/csum.c); the
 * netif switches TCP generation and TCP/UDP checking off where the
 * device does them (CSUM, GUEST_CSUM). */
#define LWIP_CHKSUM net_lwip_chksum
unsigned short net_lwip_chksum(const void *data, int len);
#define LWIP_CHECKSUM_CTRL_PER_NETIF 1
#define CHECKSUM_GEN_IP              1
#define CHECKSUM_GEN_UDP             1
#define CHECKSUM_GEN_TCP             1
#define CHECKSUM_GEN_ICMP            1
#define CHECKSUM_CHECK_IP            1
#define CHECKSUM_CHECK_UDP           1
#define CHECKSUM_CHECK_TCP           1
#define CHECKSUM_CHECK_ICMP          1

/* ---- counters: drops and checksum errors end up in the result */
#define LWIP_STATS         1
#define LWIP_STATS_LARGE   1 /* 32-bit: lwIP's 16-bit counters wrap within a second */
#define LWIP_STATS_DISPLAY 0
#define LINK_STATS         1
#define ETHARP_STATS       1
#define IP6_STATS          1
#define ICMP6_STATS        1
#define ND6_STATS          1
#define IP_STATS           1
#define IPFRAG_STATS       1
#define ICMP_STATS         1
#define UDP_STATS          1
#define TCP_STATS          1
#define MEM_STATS          1
#define MEMP_STATS         1
#define SYS_STATS          0

#endif
