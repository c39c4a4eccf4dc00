/* SPDX-License-Identifier: GPL-2.0 */
#ifndef AF_SMBDIRECT_TEST_HOOKS_H
#define AF_SMBDIRECT_TEST_HOOKS_H

/*
 * Hooks that exist only in test builds (make SMBDIRECT_KUNIT=1): debugfs
 * files under af_smbdirect/ that let the VM harness prove its detectors work.
 */
#ifdef SMBDIRECT_KUNIT
void af_smbdirect_test_hooks_init(void);
void af_smbdirect_test_hooks_exit(void);
#else
static inline void af_smbdirect_test_hooks_init(void) {}
static inline void af_smbdirect_test_hooks_exit(void) {}
#endif

#endif
