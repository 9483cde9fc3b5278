/* newlib's system calls (built with --disable-newlib-supplied-syscalls;
 * for x86_64-elf newlib calls the plain names: write, sbrk, ...). Only the
 * console, the heap (sbrk in kernel/mem.c) and exit exist; the rest say
 * ENOSYS so a stray call fails visibly instead of pretending. */
#include <errno.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/times.h>
#include <unistd.h>

#include "kernel/console.h"
#include "kernel/exit.h"
#include "kernel/time.h"

int kill(pid_t pid, int sig);
int gettimeofday(struct timeval *tv, void *tz);
int open(const char *path, int flags, ...);

static int is_console(int fd)
{
    return fd == 1 || fd == 2;
}

_READ_WRITE_RETURN_TYPE write(int fd, const void *buf, size_t n)
{
    if (!is_console(fd)) {
        errno = EBADF;
        return -1;
    }
    console_write(buf, n);
    return (_READ_WRITE_RETURN_TYPE)n;
}

int fstat(int fd, struct stat *st)
{
    if (fd < 0 || fd > 2) {
        errno = EBADF;
        return -1;
    }
    st->st_mode = S_IFCHR;
    return 0;
}

int isatty(int fd)
{
    return fd >= 0 && fd <= 2;
}

int gettimeofday(struct timeval *tv, void *tz)
{
    (void)tz;
    uint64_t ns = time_ns();
    tv->tv_sec = (time_t)(ns / 1000000000u);
    tv->tv_usec = (suseconds_t)(ns % 1000000000u / 1000u);
    return 0;
}

void _exit(int code)
{
    vn_exit(code == 0 ? VN_EXIT_OK : VN_EXIT_INTERNAL);
}

pid_t getpid(void)
{
    return 1;
}

static int nosys(void)
{
    errno = ENOSYS;
    return -1;
}

_READ_WRITE_RETURN_TYPE read(int fd, void *buf, size_t n)
{
    return (void)fd, (void)buf, (void)n, nosys();
}
int close(int fd)
{
    return (void)fd, nosys();
}
int open(const char *path, int flags, ...)
{
    return (void)path, (void)flags, nosys();
}
off_t lseek(int fd, off_t off, int whence)
{
    return (void)fd, (void)off, (void)whence, nosys();
}
int kill(pid_t pid, int sig)
{
    return (void)pid, (void)sig, nosys();
}
