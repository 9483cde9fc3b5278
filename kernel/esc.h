/* Text from outside (the config, the command line) echoed on the console,
 * where a line that starts with "@vnperf " is a machine line the host
 * believes (docs/protocol.md): every byte that could end a line, move the
 * cursor or be read as one (CR, LF, controls, DEL, anything above 0x7e)
 * goes out as \n, \r, \t or \xNN, and a backslash as \\, so no echoed
 * text can start a line of its own. */
#ifndef VN_ESC_H
#define VN_ESC_H

#include <stddef.h>

/* Room for n escaped bytes and the NUL: at most 4 characters each. */
#define ESC_CAP(n) (4 * (n) + 1)

/* Escapes n bytes of src (NULs included) into dst, NUL-terminated within
 * cap; an escape that does not fit is left out whole. Returns the length
 * written. */
size_t esc_text(char *dst, size_t cap, const char *src, size_t n);

#endif
