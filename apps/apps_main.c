/* The appliance on a booted machine: the config from fw_cfg or the
 * command line, checked (the kernel's reader with the appliance's key
 * table, then the keys whose values need more than the table), and the
 * app it names, which gets it and whose code is the exit code. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "apps/app.h"
#include "apps/app_config.h"
#include "apps/app_smp.h"
#include "kernel/boot_info.h"
#include "kernel/esc.h"
#include "kernel/exit.h"
#include "kernel/fwcfg.h"
#include "kernel/kernel.h"
#include "kernel/result.h"
#include "kernel/time.h"

#define FWCFG_CONFIG_FILE "opt/vnperf/config"

static char fwcfg_config[2048];
static struct app_config parsed_config; /* the line, parsed once; apps get it const */
/* The config as echoed: escaped (kernel/esc.h), a newline in it forged an
 * @vnperf line ahead of the real exit line. */
static char config_echo[ESC_CAP(sizeof(fwcfg_config))];

/* The command line minus the words the platform adds (microvm's
 * virtio_mmio.device=...): is anything of the user's left? */
static int cmdline_has_config(const char *s)
{
    while (*s) {
        s += strspn(s, " \t\r\n");
        size_t n = strcspn(s, " \t\r\n");
        if (n && strncmp(s, "virtio_mmio.device=", 19) != 0)
            return 1;
        s += n;
    }
    return 0;
}

static void load_config(const struct boot_info *bi, struct app_config *c)
{
    char err[256];
    const char *line = bi->cmdline;
    size_t len = strlen(line);
    const char *src = "cmdline";
    int rc = fwcfg_read_file(FWCFG_CONFIG_FILE, fwcfg_config, sizeof(fwcfg_config));

    if (bi->flags & BOOT_F_CMDLINE_TOO_LONG)
        vn_fatal(VN_EXIT_CONFIG,
                 "config: the kernel command line is longer than %d bytes; give the config "
                 "through fw_cfg %s instead",
                 BOOT_CMDLINE_MAX - 1, FWCFG_CONFIG_FILE);
    if (rc == -E2BIG)
        vn_fatal(VN_EXIT_CONFIG, "config: fw_cfg file %s is larger than %zu bytes",
                 FWCFG_CONFIG_FILE, sizeof(fwcfg_config) - 1);
    if (rc >= 0) {
        if (cmdline_has_config(bi->cmdline))
            printf("config: both fw_cfg %s and the command line are given; fw_cfg wins, the "
                   "command line is ignored\n",
                   FWCFG_CONFIG_FILE);
        line = fwcfg_config;
        len = (size_t)rc; /* a NUL inside is refused, not taken as the end */
        src = "fw_cfg";
    }
    esc_text(config_echo, sizeof(config_echo), line, len);
    printf("config (%s): %s\n", src, config_echo);
    if (app_config_parse(c, line, len, err, sizeof(err)) < 0 ||
        app_config_check(c, err, sizeof(err)) < 0)
        vn_fatal(VN_EXIT_CONFIG, "%s", err);

    struct json *j = result_begin("config");
    json_str(j, "source", src);
    json_str(j, "line", line);
    result_end();
}

int apps_main(const struct boot_info *bi)
{
    load_config(bi, &parsed_config);
    app_smp_start(&parsed_config);
    const struct app *app = app_find(parsed_config.app);
    if (!app)
        vn_fatal(VN_EXIT_INTERNAL, "app '%s' passed the config check but is not in the table",
                 parsed_config.app);

    time_app_start = time_cycles();
    struct json *j = result_begin("ready");
    json_str(j, "app", app->name);
    json_u64(j, "t_ns", time_ns());
    result_end();
    return app->main(&parsed_config);
}
