/* A generic key=value reader: "key=value" words from the PVH command line
 * or a fw_cfg file, parsed into a struct its caller owns, as the caller's
 * key table (struct cfg_table) describes. The kernel knows no key: the
 * keys and what they fill are the appliance's (docs/config.md). */
#ifndef VN_CONFIG_H
#define VN_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CFG_STR_MAX  128
#define CFG_LONG_MAX 1024 /* a list value: features=, app=reneg's sets= (vnperf conform's) */
#define CFG_KEYS_MAX 128  /* keys in one table: the bits of struct cfg_given */

enum cfg_type {
    CFG_UINT, /* decimal (or 0x hex), k/m/g suffix allowed, within [min, max] */
    CFG_BOOL, /* 0/1, on/off, yes/no, true/false */
    CFG_ENUM, /* one of choices ("a|b|c"); stored as the index */
    CFG_IP4,  /* dotted quad; stored in network byte order */
    CFG_IP6,  /* RFC 4291 s2.2 text ("::" once, no dotted tail); 16 bytes, network order */
    CFG_MAC,  /* xx:xx:xx:xx:xx:xx */
    CFG_STR,  /* free text checked by the key's parse hook, if any */
};

struct cfg_key {
    const char *name;
    enum cfg_type type;
    size_t offset; /* into the struct the table describes */
    size_t size;   /* of the field: CFG_UINT 1, 2, 4 or 8; CFG_STR its capacity */
    uint64_t min, max;
    const char *choices; /* CFG_ENUM */
    const char *def;     /* default as text, parsed like user input; NULL: none */
    const char *help;
    /* Extra check for CFG_STR (and any type): 0 or -EINVAL with why. */
    int (*check)(const char *val, char *why, size_t whylen);
};

/* A key table: what the words may be and where each value goes. */
struct cfg_table {
    const struct cfg_key *keys;
    size_t nkeys; /* at most CFG_KEYS_MAX */
};

/* Which keys a parse saw (bit per key index), so the owner can tell a
 * default from a choice. */
struct cfg_given {
    uint64_t bits[CFG_KEYS_MAX / 64];
};

/* Parses one config string into obj (objsize bytes, zeroed, then every
 * key's default) as t describes, noting the keys the line gives in
 * given (which may lie inside obj). On error writes one line naming the
 * key, the value and what is allowed into err and returns -EINVAL. Words
 * the transport owns (virtio_mmio.device=...) are skipped. */
int config_parse(const struct cfg_table *t, void *obj, size_t objsize, struct cfg_given *given,
                 const char *line, char *err, size_t errlen);

/* config_parse for text of len bytes read from outside (the fw_cfg file),
 * followed by a NUL: a NUL inside it would cut the config silently, so it
 * is refused with its offset. */
int config_parse_text(const struct cfg_table *t, void *obj, size_t objsize, struct cfg_given *given,
                      const char *text, size_t len, char *err, size_t errlen);

bool config_given(const struct cfg_table *t, const struct cfg_given *given, const char *key);

/* Number with the config syntax (decimal, 0x hex, k/m/g, ki/mi/gi):
 * 0, -EINVAL or -ERANGE. */
int config_parse_uint(const char *s, uint64_t *out);

/* IPv6 address text, RFC 4291 s2.2: eight groups of 1..4 hex digits, one
 * "::" for a run of zero groups; into out in network order. 0 or -EINVAL. */
int config_parse_ip6(const char *s, uint8_t out[16]);

/* Finds the key's table index, -1 if none. */
int config_key_index(const struct cfg_table *t, const char *name);

/* Text of an enum choice of key ("?" if none). */
const char *config_enum_name(const struct cfg_table *t, const char *key, unsigned idx);

#endif
