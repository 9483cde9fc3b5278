/* virtio-mmio (virtio 1.2 s4.2), version 2 and the legacy version 1,
 * found through the virtio_mmio.device=<size>@<base>:<irq> words QEMU
 * (-M microvm) puts on the command line. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "drivers/virtio/virtio_mmio_cmdline.h"
#include "drivers/virtio/virtio_regs.h"
#include "drivers/virtio/virtio_transport.h"
#include "drivers/virtio/virtq.h"
#include "kernel/acpi.h"
#include "kernel/esc.h"
#include "kernel/io.h"
#include "kernel/irq.h"
#include "kernel/mem.h"

#define VM_MAGIC            0x000
#define VM_VERSION          0x004
#define VM_DEVICE_ID        0x008
#define VM_DEV_FEATURES     0x010
#define VM_DEV_FEATURES_SEL 0x014
#define VM_DRV_FEATURES     0x020
#define VM_DRV_FEATURES_SEL 0x024
#define VM_GUEST_PAGE_SIZE  0x028 /* v1 */
#define VM_QUEUE_SEL        0x030
#define VM_QUEUE_NUM_MAX    0x034
#define VM_QUEUE_NUM        0x038
#define VM_QUEUE_ALIGN      0x03c /* v1 */
#define VM_QUEUE_PFN        0x040 /* v1 */
#define VM_QUEUE_READY      0x044 /* v2 */
#define VM_QUEUE_NOTIFY     0x050
#define VM_INT_STATUS       0x060
#define VM_INT_ACK          0x064
#define VM_STATUS           0x070
#define VM_QUEUE_DESC_LO    0x080
#define VM_QUEUE_DESC_HI    0x084
#define VM_QUEUE_AVAIL_LO   0x090
#define VM_QUEUE_AVAIL_HI   0x094
#define VM_QUEUE_USED_LO    0x0a0
#define VM_QUEUE_USED_HI    0x0a4
#define VM_QUEUE_RESET      0x0c0 /* v2, virtio 1.2 */
#define VM_CONFIG_GEN       0x0fc /* v2 */
#define VM_CONFIG           0x100

#define VM_MAGIC_VALUE 0x74726976u /* "virt" */
#define VM_RESET_SPINS 1000000

/* The device's interrupt line, from its virtio_mmio.device= word or
 * its DSDT entry. */
struct vm_irq {
    bool known;
    bool edge, active_low; /* QEMU's line is level, active high */
    uint32_t gsi;
};

struct virtio_mmio {
    struct virtio_dev vdev; /* first: the ops get this pointer */
    uintptr_t base;
    uint64_t phys;
    uint64_t size;
    uint32_t version;
    struct vm_irq irq;
    int vector; /* every queue's, once irq_setup routed the line */
};

static struct virtio_mmio virtio_mmio_devs[VIRTIO_TRANSPORT_MAX];
static int virtio_mmio_used;

static struct virtio_mmio *vm_of(struct virtio_dev *d)
{
    return (struct virtio_mmio *)d;
}

static int vm_reset(struct virtio_dev *d)
{
    uintptr_t b = vm_of(d)->base;
    mmio_write32(b + VM_STATUS, 0);
    /* s4.2.2.2: reset is done when status reads 0 again. */
    for (int i = 0; i < VM_RESET_SPINS && mmio_read32(b + VM_STATUS); i++)
        cpu_relax();
    return mmio_read32(b + VM_STATUS) ? -ETIMEDOUT : 0;
}

static uint8_t vm_get_status(struct virtio_dev *d)
{
    return (uint8_t)mmio_read32(vm_of(d)->base + VM_STATUS);
}

static void vm_set_status(struct virtio_dev *d, uint8_t s)
{
    mmio_write32(vm_of(d)->base + VM_STATUS, s);
}

static uint64_t vm_get_features(struct virtio_dev *d)
{
    uintptr_t b = vm_of(d)->base;
    return virtio_features_read(b + VM_DEV_FEATURES_SEL, b + VM_DEV_FEATURES);
}

static void vm_set_features(struct virtio_dev *d, uint64_t f)
{
    uintptr_t b = vm_of(d)->base;
    virtio_features_write(b + VM_DRV_FEATURES_SEL, b + VM_DRV_FEATURES, f);
}

static int vm_read_config(struct virtio_dev *d, unsigned off, void *buf, unsigned len)
{
    struct virtio_mmio *vm = vm_of(d);
    uint8_t *out = buf;
    if (VM_CONFIG + off + len > vm->size) {
        memset(out, 0, len);
        return -EINVAL;
    }
    for (int tries = 0; tries < VIRTIO_CONFIG_TRIES; tries++) {
        uint32_t gen = 0;
        if (vm->version >= 2)
            gen = mmio_read32(vm->base + VM_CONFIG_GEN);
        virtio_config_copy(vm->base + VM_CONFIG + off, out, len);
        /* s4.2.2.2: read again until ConfigGeneration is stable */
        if (vm->version < 2 || gen == mmio_read32(vm->base + VM_CONFIG_GEN))
            return 0;
    }
    return -EIO;
}

static uint16_t vm_queue_max(struct virtio_dev *d, unsigned q)
{
    uintptr_t b = vm_of(d)->base;
    mmio_write32(b + VM_QUEUE_SEL, q);
    uint32_t max = mmio_read32(b + VM_QUEUE_NUM_MAX);
    return max > VIRTQ_MAX ? VIRTQ_MAX : (uint16_t)max;
}

static int vm_queue_setup(struct virtio_dev *d, unsigned q, uint16_t num, uint64_t desc,
                          uint64_t driver, uint64_t device)
{
    struct virtio_mmio *vm = vm_of(d);
    uintptr_t b = vm->base;
    mmio_write32(b + VM_QUEUE_SEL, q);
    if (vm->version == 1) {
        if (mmio_read32(b + VM_QUEUE_PFN) || (desc & (VIRTQ_ALIGN - 1)) ||
            (desc >> 12) > 0xffffffffu)
            return -EINVAL;
        mmio_write32(b + VM_QUEUE_NUM, num);
        mmio_write32(b + VM_QUEUE_ALIGN, VIRTQ_ALIGN);
        mmio_write32(b + VM_QUEUE_PFN, (uint32_t)(desc >> 12));
        return 0;
    }
    if (mmio_read32(b + VM_QUEUE_READY))
        return -EBUSY;
    mmio_write32(b + VM_QUEUE_NUM, num);
    mmio_write32(b + VM_QUEUE_DESC_LO, (uint32_t)desc);
    mmio_write32(b + VM_QUEUE_DESC_HI, (uint32_t)(desc >> 32));
    mmio_write32(b + VM_QUEUE_AVAIL_LO, (uint32_t)driver);
    mmio_write32(b + VM_QUEUE_AVAIL_HI, (uint32_t)(driver >> 32));
    mmio_write32(b + VM_QUEUE_USED_LO, (uint32_t)device);
    mmio_write32(b + VM_QUEUE_USED_HI, (uint32_t)(device >> 32));
    mmio_write32(b + VM_QUEUE_READY, 1);
    return 0;
}

/* s4.2.2.2: write 1 to QueueReset, then done only once it reads 0,
 * with QueueReady 0 too. */
static int vm_queue_reset(struct virtio_dev *d, unsigned q)
{
    struct virtio_mmio *vm = vm_of(d);
    uintptr_t b = vm->base;
    if (vm->version < 2)
        return -EOPNOTSUPP;
    mmio_write32(b + VM_QUEUE_SEL, q);
    mmio_write32(b + VM_QUEUE_RESET, 1);
    for (int i = 0; i < VM_RESET_SPINS && mmio_read32(b + VM_QUEUE_RESET); i++)
        cpu_relax();
    if (mmio_read32(b + VM_QUEUE_RESET))
        return -ETIMEDOUT;
    return mmio_read32(b + VM_QUEUE_READY) ? -EIO : 0;
}

/* The ring stores are ordered before this uncached store (see
 * virtq_kick's fence). */
static void vm_notify(const struct virtq_doorbell *db, uint32_t val)
{
    mmio_write32(db->addr, val); /* s4.2.2: 32 bits, with NOTIFICATION_DATA its value */
}

static void vm_queue_notifier(struct virtio_dev *d, unsigned q, struct virtq *vq)
{
    struct virtq_doorbell db = {vm_notify, vm_of(d)->base + VM_QUEUE_NOTIFY, d, (uint16_t)q, false};
    virtq_set_doorbell(vq, &db);
}

/* One line for the whole device (s4.2.2): the handler reads
 * InterruptStatus and writes it to InterruptACK, which drops the line. */
static int vm_irq_setup(struct virtio_dev *d, const char **why)
{
    struct virtio_mmio *vm = vm_of(d);
    if (vm->vector > 0)
        return 0; /* routed before this reset: the line is the same */
    if (!vm->irq.known) {
        *why = "no interrupt number (virtio_mmio.device= or DSDT)";
        return -ENODEV;
    }
    if (irq_init()) {
        *why = "no local APIC";
        return -ENODEV;
    }
    int v = irq_vector_alloc();
    if (v < 0) {
        *why = "no interrupt vector left";
        return -ENODEV;
    }
    irq_vector_level_ack(v, vm->base + VM_INT_STATUS, vm->base + VM_INT_ACK);
    if (irq_route_gsi(vm->irq.gsi, v, !vm->irq.edge, vm->irq.active_low)) {
        irq_vector_free(v);
        *why = "no I/O APIC pin for its interrupt";
        return -ENODEV;
    }
    vm->vector = v;
    return 0;
}

static int vm_queue_irq(struct virtio_dev *d, unsigned q, int *vector, const char **why)
{
    (void)q;
    (void)why;
    *vector = vm_of(d)->vector;
    return 0;
}

static const struct virtio_ops vm_ops = {
    .reset = vm_reset,
    .get_status = vm_get_status,
    .set_status = vm_set_status,
    .get_features = vm_get_features,
    .set_features = vm_set_features,
    .read_config = vm_read_config,
    .queue_max = vm_queue_max,
    .queue_setup = vm_queue_setup,
    .queue_reset = vm_queue_reset,
    .queue_notifier = vm_queue_notifier,
    .irq_setup = vm_irq_setup,
    .queue_irq = vm_queue_irq,
};

static int vm_setup(struct virtio_mmio *vm, uint16_t type)
{
    if (vm->size < VM_CONFIG)
        return -ENODEV;
    uintptr_t b = vm->base;
    if (mmio_read32(b + VM_MAGIC) != VM_MAGIC_VALUE)
        return -ENODEV;
    vm->version = mmio_read32(b + VM_VERSION);
    if (vm->version != 1 && vm->version != 2)
        return -ENODEV;
    /* Device id 0 is an empty slot (s4.2.2). */
    if (mmio_read32(b + VM_DEVICE_ID) != type)
        return -ENOENT;
    vm->vdev.ops = &vm_ops;
    vm->vdev.device_id = type;
    vm->vdev.legacy = vm->version == 1;
    vm->vdev.queue_size_fixed = false;
    vm->vdev.transport = vm->version == 1 ? "mmio-legacy" : "mmio";
    if (vm->version == 1)
        mmio_write32(b + VM_GUEST_PAGE_SIZE, VIRTQ_ALIGN); /* QueuePFN unit */
    snprintf(vm->vdev.name, sizeof(vm->vdev.name), "mmio@0x%llx v%u", (unsigned long long)vm->phys,
             vm->version);
    return 0;
}

/* Maps and checks one window; adds it to out when it holds a device of
 * this type. Returns 1 when added, 0 when not. */
static int vm_add(struct virtio_dev **out, uint64_t base, uint64_t size, const struct vm_irq *irq,
                  uint16_t type)
{
    for (int i = 0; i < virtio_mmio_used; i++)
        if (virtio_mmio_devs[i].phys == base)
            return 0; /* named twice (command line and ACPI) */
    if (virtio_mmio_used == VIRTIO_TRANSPORT_MAX) {
        printf("virtio-mmio: more than %d devices, 0x%llx ignored\n", VIRTIO_TRANSPORT_MAX,
               (unsigned long long)base);
        return 0;
    }
    struct virtio_mmio *vm = &virtio_mmio_devs[virtio_mmio_used];
    memset(vm, 0, sizeof(*vm));
    vm->size = size;
    vm->phys = base;
    vm->irq = *irq;
    vm->base = mem_map_mmio(base, size);
    if (!vm->base || vm_setup(vm, type))
        return 0;
    printf("virtio-mmio: %s\n", vm->vdev.name);
    virtio_mmio_used++;
    *out = &vm->vdev;
    return 1;
}

/* With ACPI, QEMU's microvm lists its virtio-mmio windows in the DSDT as
 * devices with _HID "LNRO0005" and a Memory32Fixed _CRS instead of
 * putting them on the command line. A byte scan finds them: the string,
 * then the first Memory32Fixed descriptor (ACPI 6.4 s6.4.3.4: tag 0x86,
 * length 9, info, base, length) shortly after it, and the interrupt in
 * the Extended Interrupt descriptor QEMU puts right behind it. */
#define FADT_DSDT   40
#define FADT_X_DSDT 140
#define AML_SCAN    96
#define AML_MEM32   12 /* Memory32Fixed descriptor bytes */

/* ACPI 6.4 s6.4.3.6: tag 0x89, 16-bit length (at least 6), flags (bit 1
 * edge, bit 2 active low), count, then 32-bit interrupt numbers (GSIs).
 * Leaves irq unknown when p (avail bytes) holds none. */
static void vm_aml_irq(const uint8_t *p, uint32_t avail, struct vm_irq *irq)
{
    if (avail < 9 || p[0] != 0x89 || (p[1] | p[2] << 8) < 6 || p[4] < 1)
        return;
    uint32_t gsi;
    memcpy(&gsi, p + 5, 4);
    *irq = (struct vm_irq){.known = true, .edge = p[3] & 2, .active_low = p[3] & 4, .gsi = gsi};
}

static const struct acpi_sdt_hdr *vm_dsdt(void)
{
    const struct acpi_sdt_hdr *f = acpi_find_table("FACP");
    if (!f || f->len < FADT_DSDT + 4)
        return NULL;
    const uint8_t *fb = (const uint8_t *)f;
    uint64_t addr = 0;
    if (f->len >= FADT_X_DSDT + 8)
        memcpy(&addr, fb + FADT_X_DSDT, 8);
    if (!addr) {
        uint32_t a32;
        memcpy(&a32, fb + FADT_DSDT, 4);
        addr = a32;
    }
    return acpi_table_at(addr, "DSDT");
}

static int vm_probe_acpi(struct virtio_dev **out, int max, uint16_t type)
{
    const struct acpi_sdt_hdr *d = vm_dsdt();
    if (!d)
        return 0;
    static const char hid[] = "LNRO0005";
    const uint8_t *aml = (const uint8_t *)d;
    int found = 0;
    for (uint32_t i = sizeof(*d); i + sizeof(hid) - 1 < d->len && found < max; i++) {
        if (memcmp(aml + i, hid, sizeof(hid) - 1))
            continue;
        for (uint32_t k = i + sizeof(hid) - 1; k + AML_MEM32 <= d->len && k < i + AML_SCAN; k++) {
            if (aml[k] != 0x86 || aml[k + 1] != 9 || aml[k + 2] != 0)
                continue;
            uint32_t base, len;
            struct vm_irq irq = {0};
            memcpy(&base, aml + k + 4, 4);
            memcpy(&len, aml + k + 8, 4);
            vm_aml_irq(aml + k + AML_MEM32, d->len - k - AML_MEM32, &irq);
            if (base && len)
                found += vm_add(out + found, base, len, &irq, type);
            break;
        }
    }
    return found;
}

int virtio_mmio_probe(struct virtio_dev **out, int max, uint16_t type, const char *cmdline)
{
    int found = 0;
    size_t len = cmdline ? strlen(cmdline) : 0, pos = 0, wlen;
    const char *w;
    while (found < max && vm_cmdline_next(cmdline, len, &pos, &w, &wlen)) {
        struct vm_word v;
        if (vm_word_parse(w, wlen, &v)) {
            char echo[ESC_CAP(128)]; /* a word of the command line: escaped */
            esc_text(echo, sizeof(echo), w, wlen);
            printf("virtio-mmio: cannot parse '%s'\n", echo);
            continue;
        }
        struct vm_irq irq = {.known = true, .gsi = v.gsi};
        found += vm_add(out + found, v.base, v.size, &irq, type);
    }
    if (found < max)
        found += vm_probe_acpi(out + found, max - found, type);
    return found;
}
