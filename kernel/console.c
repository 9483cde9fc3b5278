/* 16550 UART on COM1: the console and the results channel. */
#include "kernel/console.h"
#include "kernel/io.h"

#define COM1     0x3f8
#define UART_THR 0
#define UART_IER 1
#define UART_FCR 2
#define UART_LCR 3
#define UART_MCR 4
#define UART_LSR 5
#define LSR_THRE 0x20

static int uart_ok;

void console_init(void)
{
    pio_write8(COM1 + UART_IER, 0x00); /* polled: no interrupts */
    pio_write8(COM1 + UART_LCR, 0x80); /* DLAB to set the divisor */
    pio_write8(COM1 + 0, 0x01);        /* 115200 baud */
    pio_write8(COM1 + 1, 0x00);
    pio_write8(COM1 + UART_LCR, 0x03); /* 8N1 */
    pio_write8(COM1 + UART_FCR, 0x07); /* FIFO on, cleared */
    pio_write8(COM1 + UART_MCR, 0x03);
    /* No UART (0xff from an empty port): keep going without a console
     * rather than spin forever on a status bit that never clears. */
    uart_ok = pio_read8(COM1 + UART_LSR) != 0xff;
}

static void uart_putc(char c)
{
    for (int spin = 0; spin < 100000; spin++) {
        if (pio_read8(COM1 + UART_LSR) & LSR_THRE)
            break;
        cpu_relax();
    }
    pio_write8(COM1 + UART_THR, (uint8_t)c);
}

void console_write(const char *s, size_t n)
{
    if (!uart_ok)
        return;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\n')
            uart_putc('\r');
        uart_putc(s[i]);
    }
}
