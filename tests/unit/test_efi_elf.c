#include <elf.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "boot/efi/efi_elf.h"

/* A two-segment kernel like the real one: text at 1 MiB, data + bss after. */
struct img {
    Elf64_Ehdr eh;
    Elf64_Phdr ph[3];
    unsigned char data[0x3000];
};

static struct img make(void)
{
    struct img m;
    memset(&m, 0, sizeof(m));
    memcpy(m.eh.e_ident, ELFMAG, SELFMAG);
    m.eh.e_ident[EI_CLASS] = ELFCLASS64;
    m.eh.e_ident[EI_DATA] = ELFDATA2LSB;
    m.eh.e_ident[EI_VERSION] = EV_CURRENT;
    m.eh.e_version = EV_CURRENT;
    m.eh.e_type = ET_EXEC;
    m.eh.e_machine = EM_X86_64;
    m.eh.e_entry = 0x100010;
    m.eh.e_phoff = offsetof(struct img, ph);
    m.eh.e_phentsize = sizeof(Elf64_Phdr);
    m.eh.e_phnum = 3;
    m.ph[0] = (Elf64_Phdr){.p_type = PT_LOAD,
                           .p_flags = PF_R | PF_X,
                           .p_offset = 0x100,
                           .p_vaddr = 0x100000,
                           .p_paddr = 0x100000,
                           .p_filesz = 0x1800,
                           .p_memsz = 0x1800};
    /* Starts in the page text ends in: the ranges must merge. */
    m.ph[1] = (Elf64_Phdr){.p_type = PT_LOAD,
                           .p_flags = PF_R | PF_W,
                           .p_offset = 0x1900,
                           .p_vaddr = 0x101800,
                           .p_paddr = 0x101800,
                           .p_filesz = 0x100,
                           .p_memsz = 0x5000};
    m.ph[2] = (Elf64_Phdr){.p_type = PT_GNU_STACK};
    return m;
}

static int parse(struct img *m, size_t size, const char **why)
{
    struct efi_elf_image out;
    return efi_elf_parse(m, size, &out, why);
}

static void valid_image(void **state)
{
    (void)state;
    struct img m = make();
    struct efi_elf_image out;
    const char *why = NULL;
    assert_int_equal(efi_elf_parse(&m, sizeof(m), &out, &why), 0);
    assert_int_equal(out.entry, 0x100010);
    assert_int_equal(out.nseg, 2);
    assert_int_equal(out.seg[1].paddr, 0x101800);
    assert_int_equal(out.seg[1].memsz, 0x5000);
    assert_int_equal(out.nrange, 1);
    assert_int_equal(out.range[0].base, 0x100000);
    assert_int_equal(out.range[0].pages, 7); /* 0x100000..0x106800 rounded up */
}

static void separate_ranges_sorted(void **state)
{
    (void)state;
    struct img m = make();
    /* Data listed first and far above text: sorted, two ranges. */
    Elf64_Phdr t = m.ph[0];
    m.ph[0] = m.ph[1];
    m.ph[0].p_vaddr = m.ph[0].p_paddr = 0x400000;
    m.ph[1] = t;
    struct efi_elf_image out;
    const char *why = NULL;
    assert_int_equal(efi_elf_parse(&m, sizeof(m), &out, &why), 0);
    assert_int_equal(out.nrange, 2);
    assert_int_equal(out.range[0].base, 0x100000);
    assert_int_equal(out.range[0].pages, 2);
    assert_int_equal(out.range[1].base, 0x400000);
    assert_int_equal(out.range[1].pages, 5);
    assert_int_equal(out.seg[0].paddr, 0x100000);
}

#define EXPECT_BAD(m, size, text)                                                                  \
    do {                                                                                           \
        const char *why = NULL;                                                                    \
        assert_int_equal(parse(&(m), (size), &why), -EINVAL);                                      \
        assert_non_null(strstr(why, (text)));                                                      \
    } while (0)

static void bad_headers(void **state)
{
    (void)state;
    struct img m = make();
    EXPECT_BAD(m, sizeof(Elf64_Ehdr) - 1, "smaller than an ELF header");
    m.eh.e_ident[EI_MAG1] = 'X';
    EXPECT_BAD(m, sizeof(m), "bad magic");
    m = make();
    m.eh.e_ident[EI_CLASS] = ELFCLASS32;
    EXPECT_BAD(m, sizeof(m), "64-bit");
    m = make();
    m.eh.e_ident[EI_DATA] = ELFDATA2MSB;
    EXPECT_BAD(m, sizeof(m), "little-endian");
    m = make();
    m.eh.e_machine = EM_386;
    EXPECT_BAD(m, sizeof(m), "e_machine");
    m = make();
    m.eh.e_type = ET_DYN;
    EXPECT_BAD(m, sizeof(m), "e_type");
    m = make();
    m.eh.e_phentsize = 32;
    EXPECT_BAD(m, sizeof(m), "e_phentsize");
    m = make();
    m.eh.e_phnum = 0;
    EXPECT_BAD(m, sizeof(m), "e_phnum");
    m = make();
    EXPECT_BAD(m, offsetof(struct img, ph) + 2 * sizeof(Elf64_Phdr), "program headers run past");
    m = make();
    m.eh.e_phoff = UINT64_MAX - 8;
    EXPECT_BAD(m, sizeof(m), "program headers run past");
}

static void bad_segments(void **state)
{
    (void)state;
    struct img m = make();
    m.ph[1].p_paddr = 0x201800;
    EXPECT_BAD(m, sizeof(m), "vaddr != paddr");
    m = make();
    m.ph[1].p_filesz = 0x6000;
    EXPECT_BAD(m, sizeof(m), "p_filesz > p_memsz");
    m = make();
    m.ph[1].p_offset = sizeof(m) - 0x80;
    EXPECT_BAD(m, sizeof(m), "segment data runs past");
    m = make();
    m.ph[1].p_offset = UINT64_MAX;
    EXPECT_BAD(m, sizeof(m), "segment data runs past");
    m = make();
    m.ph[1].p_vaddr = m.ph[1].p_paddr = UINT64_MAX - 0x1000;
    EXPECT_BAD(m, sizeof(m), "wraps");
    /* Issue 13 F12: a p_memsz near 2^64 made the wrap check underflow; the
     * segment was taken with 0 pages, past the overlap check. */
    m = make();
    m.ph[1].p_memsz = UINT64_MAX - 0x800;
    EXPECT_BAD(m, sizeof(m), "wraps");
    m = make();
    m.ph[1].p_memsz = UINT64_MAX;
    EXPECT_BAD(m, sizeof(m), "wraps");
    m = make();
    m.ph[1].p_vaddr = m.ph[1].p_paddr = 0x101000;
    EXPECT_BAD(m, sizeof(m), "overlap");
    m = make();
    m.ph[1].p_memsz = m.ph[1].p_filesz = 0;
    EXPECT_BAD(m, sizeof(m), "empty PT_LOAD");
    m = make();
    m.ph[0].p_type = m.ph[1].p_type = PT_NOTE;
    EXPECT_BAD(m, sizeof(m), "no PT_LOAD");
}

static void bad_entry(void **state)
{
    (void)state;
    struct img m = make();
    m.eh.e_entry = 0x101900; /* in data, not executable */
    EXPECT_BAD(m, sizeof(m), "entry point");
    m.eh.e_entry = 0x90000;
    EXPECT_BAD(m, sizeof(m), "entry point");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(valid_image), cmocka_unit_test(separate_ranges_sorted),
        cmocka_unit_test(bad_headers), cmocka_unit_test(bad_segments),
        cmocka_unit_test(bad_entry),
    };
    return cmocka_run_group_tests_name("efi_elf", tests, NULL, NULL);
}
