/* drivers/virtio/virtio_pci_modern.c's capability walk (virtio 1.2
 * s4.1.4) over tests/unit/sim_pci.c's function. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "drivers/virtio/virtio_pci.h"
#include "drivers/virtio/virtio_transport.h"
#include "sim_pci.h"

static struct sim_pci pci;

/* A vendor capability (struct virtio_pci_cap, s4.1.4) at at. */
static void vcap(unsigned at, unsigned next, uint8_t type, uint8_t bar, uint32_t off, uint32_t len)
{
    pci.cfg[at] = PCI_CAP_ID_VNDR;
    pci.cfg[at + 1] = (uint8_t)next;
    pci.cfg[at + 2] = type == 2 ? 20 : 16;
    pci.cfg[at + 3] = type;
    pci.cfg[at + 4] = bar;
    sim_pci_put32(&pci, at + 8, off);
    sim_pci_put32(&pci, at + 12, len);
}

/* QEMU's layout: BAR 4, 64-bit, 16 KiB; common, ISR, device, notify. */
static void qemu_layout(void)
{
    memset(&pci, 0, sizeof(pci));
    pci.cfg[PCI_STATUS] = PCI_STATUS_CAP_LIST;
    pci.cfg[PCI_CAP_PTR] = 0x40;
    sim_pci_put32(&pci, PCI_BAR0 + 16, 0xfe00000c);
    pci.bar_size[4] = 0x4000;
    vcap(0x40, 0x50, 1, 4, 0, 0x1000);
    vcap(0x50, 0x60, 3, 4, 0x1000, 0x1000);
    vcap(0x60, 0x70, 4, 4, 0x2000, 0x1000);
    vcap(0x70, 0, 2, 4, 0x3000, 0x1000);
    sim_pci_put32(&pci, 0x70 + 16, 4);
}

static int teardown(void **state)
{
    (void)state;
    sim_pci_free(&pci);
    return 0;
}

static void test_qemu(void **state)
{
    (void)state;
    qemu_layout();
    sim_pci_bars(&pci);
    struct virtio_pci vp;
    memset(&vp, 0, sizeof(vp));
    assert_int_equal(virtio_pci_modern_setup(&vp), 0);
    assert_true(vp.common == (uintptr_t)pci.bar_mem[4]);
    assert_true(vp.isr == (uintptr_t)pci.bar_mem[4] + 0x1000);
    assert_true(vp.devcfg == (uintptr_t)pci.bar_mem[4] + 0x2000);
    assert_true(vp.notify == (uintptr_t)pci.bar_mem[4] + 0x3000);
    assert_int_equal(vp.notify_len, 0x1000);
    assert_int_equal(vp.notify_mult, 4);
    assert_int_equal(vp.devcfg_len, 0x1000);
    assert_int_equal(pci.cfg_faults + pci.map_faults, 0);
}

/* Found by fuzz_virtio_pci: a vendor capability list that loops (the
 * last one's next pointing back at the first) hung the walk, since
 * pci_cap_next bounds one call, not the walk. */
static void test_looping_list(void **state)
{
    (void)state;
    qemu_layout();
    pci.cfg[0x71] = 0x40;
    pci.cfg_limit = 100000;
    sim_pci_bars(&pci);
    struct virtio_pci vp;
    memset(&vp, 0, sizeof(vp));
    assert_int_equal(virtio_pci_modern_setup(&vp), 0);
    assert_int_equal(pci.cfg_faults, 0);
    assert_true(vp.notify == (uintptr_t)pci.bar_mem[4] + 0x3000);
}

/* Found by fuzz_virtio_pci: a capability near the end of config space
 * (a notify one at 0xf0 has its multiplier at 0x100) was read past it,
 * and cap_len was never looked at. Such a capability is ignored, and
 * the next of its type is used. */
static void test_cap_past_config_space(void **state)
{
    (void)state;
    qemu_layout();
    pci.cfg[0x71] = 0xf0; /* the good notify capability, then one at 0xf0 */
    pci.cfg[0x73] = 7;    /* ... made a reserved type: only 0xf0's is a notify */
    vcap(0xf0, 0, 2, 4, 0x3000, 0x1000);
    sim_pci_bars(&pci);
    struct virtio_pci vp;
    memset(&vp, 0, sizeof(vp));
    assert_int_equal(virtio_pci_modern_setup(&vp), -ENODEV);
    assert_int_equal(pci.cfg_faults, 0);
    /* cap_len shorter than the structure: ignored, the next one used */
    sim_pci_free(&pci);
    qemu_layout();
    pci.cfg[0x41] = 0x80;
    vcap(0x80, 0x50, 1, 4, 0, 0x1000);
    pci.cfg[0x42] = 15;
    sim_pci_put32(&pci, 0x40 + 8, 0x100);
    sim_pci_bars(&pci);
    memset(&vp, 0, sizeof(vp));
    assert_int_equal(virtio_pci_modern_setup(&vp), 0);
    assert_true(vp.common == (uintptr_t)pci.bar_mem[4]);
    assert_int_equal(pci.cfg_faults, 0);
}

/* Found by fuzz_virtio_pci: read_config's range check added off and len
 * in 32 bits, so off near UINT_MAX wrapped past it and read far before
 * the window. */
static void test_read_config_range(void **state)
{
    (void)state;
    qemu_layout();
    sim_pci_bars(&pci);
    struct virtio_pci vp;
    memset(&vp, 0, sizeof(vp));
    assert_int_equal(virtio_pci_modern_setup(&vp), 0);
    struct virtio_dev *v = &vp.vdev;
    uint8_t buf[8];
    pci.bar_mem[4][0x2000 + 0xffe] = 0x5a;
    assert_int_equal(v->ops->read_config(v, 0xffe, buf, 2), 0);
    assert_int_equal(buf[0], 0x5a);
    assert_int_equal(v->ops->read_config(v, 0xfff, buf, 2), -EINVAL);
    assert_int_equal(v->ops->read_config(v, 0xffffffffu, buf, 2), -EINVAL);
    assert_int_equal(v->ops->read_config(v, 0xfffffffcu, buf, 8), -EINVAL);
    assert_int_equal(buf[0], 0); /* what a refused read gives */
}

/* Found by fuzz_virtio_pci: a capability naming BAR 4 when BAR 3 is
 * 64-bit (BAR 4 its upper half) was decoded as a BAR of its own, and a
 * window mapped at whatever the upper half holds. Such a BAR is refused,
 * the capability ignored. */
static void test_cap_in_upper_half(void **state)
{
    (void)state;
    qemu_layout();
    sim_pci_put32(&pci, PCI_BAR0 + 12, 0xfd00000c); /* BAR 3, 64-bit: BAR 4 is its top */
    pci.bar_size[3] = 0x4000;
    sim_pci_bars(&pci);
    struct virtio_pci vp;
    memset(&vp, 0, sizeof(vp));
    assert_int_equal(virtio_pci_modern_setup(&vp), -ENODEV);
    assert_int_equal(pci.cfg_faults + pci.map_faults, 0);
    struct pci_bar b;
    assert_int_equal(pci_bar(&vp.pci, 4, &b), -EINVAL);
    assert_int_equal(pci_bar(&vp.pci, 3, &b), 0);
    assert_true(b.is64 && b.size == 0x4000 && b.addr == 0xfe00000cfd000000ull);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_qemu, teardown),
        cmocka_unit_test_teardown(test_looping_list, teardown),
        cmocka_unit_test_teardown(test_cap_past_config_space, teardown),
        cmocka_unit_test_teardown(test_read_config_range, teardown),
        cmocka_unit_test_teardown(test_cap_in_upper_half, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
