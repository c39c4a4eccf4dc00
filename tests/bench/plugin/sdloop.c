// SPDX-License-Identifier: GPL-2.0
/*
 * sdloop: the sdcount plugin's known workload (tests/host/sdcount.sh).
 *
 *   sdloop N [LABEL [nomarks]]
 *
 * Runs a loop of exactly 2*N + 3 instructions between a start and a stop
 * mark with LABEL (default 1):
 *	mov $start,%eax; cpuid		(the plugin starts counting after it)
 *	mov N,%rsi			1
 *	1: dec %rsi; jnz 1b		2 per iteration
 *	mov $stop,%eax; cpuid		2 (the stop cpuid counts)
 * "nomarks" runs the same loop with eax loaded with a value that is not a
 * mark, so that the plugin must report nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SD_MARK(label, stop) (0x53440000u | (label) << 1 | (stop))

#define LOOP(start, stop, count)					\
	do {								\
		unsigned long _n = (count);				\
		asm volatile("mov %[a],%%eax\n\tcpuid\n\t"		\
			     "mov %[n],%%rsi\n"				\
			     "1:\tdec %%rsi\n\tjnz 1b\n\t"		\
			     "mov %[b],%%eax\n\tcpuid"			\
			     : : [a] "i"(start), [b] "i"(stop), [n] "m"(_n)	\
			     : "rax", "rbx", "rcx", "rdx", "rsi", "cc", "memory"); \
	} while (0)

int main(int argc, char **argv)
{
	unsigned long n;
	unsigned int label;

	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: sdloop N [LABEL [nomarks]]\n");
		return 2;
	}
	n = strtoul(argv[1], NULL, 0);
	label = argc > 2 ? strtoul(argv[2], NULL, 0) : 1;
	if (!n || label > 0x7fff) {
		fprintf(stderr, "sdloop: N must be > 0, LABEL < 32768\n");
		return 2;
	}
	if (argc > 3 && !strcmp(argv[3], "nomarks")) {
		LOOP(0x12345678, 0x12345679, n);
		return 0;
	}
	/* the asm needs immediates: one case per label the test uses */
	switch (label) {
	case 1:
		LOOP(SD_MARK(1, 0), SD_MARK(1, 1), n);
		break;
	case 2:
		LOOP(SD_MARK(2, 0), SD_MARK(2, 1), n);
		break;
	default:
		fprintf(stderr, "sdloop: LABEL 1 or 2\n");
		return 2;
	}
	return 0;
}
