/* app=reneg's sets=: the feature sets one boot runs in turn, each after
 * a device reset and a new negotiation (virtio 1.2 s2.4, s3.1.1).
 *
 * Sets are separated by '/', a set's words by ','. A word is -NAME (a
 * feature off, features='s names: vnet_features_check), indirect:on,
 * indirect:off or indirect:auto (indirect='s values), or the set is the
 * one word all (every feature on, indirect:auto). Example:
 *   sets=all/-event_idx,-ring_packed/-mrg_rxbuf,indirect:off */
#ifndef VN_RENEG_SETS_H
#define VN_RENEG_SETS_H

#include <stddef.h>
#include <stdint.h>

#define RENEG_SETS_MAX 8

struct reneg_set {
    uint64_t features_off; /* vnet_params.features_off */
    uint8_t indirect;      /* enum vnet_indirect */
    char text[384];        /* the set as given: every switchable feature off fits */
};

/* The config table's hook: "" (no sets: not app=reneg) or a valid list;
 * else -EINVAL with the set's number, the word and why in why. */
int reneg_sets_check(const char *val, char *why, size_t whylen);

/* val parsed into out[0..max): the number of sets, or -EINVAL with one
 * line in why (an empty val is an error here: app=reneg needs sets). */
int reneg_sets_parse(const char *val, struct reneg_set *out, unsigned max, char *why,
                     size_t whylen);

#endif
