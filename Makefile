# SPDX-License-Identifier: GPL-2.0
#
# smbdirect: af_smbdirect.ko, its UAPI, the user-space library and the tests.
#
#   make                 build af_smbdirect.ko against KDIR (default: running kernel)
#                        (WERROR=1: warnings are errors, as make check builds it)
#   make demo            the main job: set up, build, boot the test VM, show it working
#   make check           every test layer; ends with "N passed, N failed"
#   make check-host      host unit tests (ASan/UBSan), fuzzers, coverage
#   make check-module    compile tests: Debian 12 6.1 headers and both test kernels
#   make check-docs      `make docs` and the UAPI reference's completeness
#   make check-vm        KUnit + kselftests in the test VM (VM_KERNELS="7.2" for one)
#   make kunit           the KUnit suites' KTAP on stdout: VM_KERNELS in the VM, or
#                        the KUnit module for KDIR (loaded if KDIR is the running kernel)
#   make check-demo      `make demo` into a build directory that does not exist yet
#   make check-deb       the Debian packages: built, lintian, installed with DKMS
#                        into a scratch root the test VM boots, smoke test, purged
#   make install         install the module for KDIR and the user space
#                        (library, headers, pkg-config/CMake files, preload,
#                        tool, man pages, uapi header); DESTDIR, PREFIX
#   make dkms-source     copy what dkms builds to /usr/src/af_smbdirect-VERSION
#   make dist            the release tarball BUILD/dist/smbdirect-VERSION.tar.xz
#                        (reproducible: the same bytes every time)
#   make deb             Debian packages (userspace/packaging/debian) into
#                        BUILD/deb from that tarball, then lintian: the source
#                        package (3.0 (quilt)), af-smbdirect-dkms, libsmbdirect0,
#                        libsmbdirect-dev, smbdirect-tools
#   make deps            install what the build and the tests need (Debian
#                        packages: compilers, cmake, libnl, GoogleTest,
#                        abigail-tools, debhelper, lintian, QEMU, ...)
#   make userspace       build libsmbdirect, the preload and the smbdirect command
#                        (WERROR=1: warnings are errors, as in the test layers;
#                        CPPFLAGS/CFLAGS/CXXFLAGS/LDFLAGS as dpkg-buildflags sets them)
#   make uninstall       remove the user space `make install` put there (same BUILD, DESTDIR)
#   make samba           Samba 4.22.6's smbd and smbclient with SMB-Direct and the RDMA
#                        channel (userspace/samba) into BUILD/samba/bin
#   make bench           benchmark against perftest (non-debug kernel; not a test)
#   make docs            Documentation/ to build/docs/html (Sphinx; warnings are errors)
#
ifneq ($(KERNELRELEASE),)
include $(src)/Kbuild
else

ROOT := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))
BUILD ?= $(ROOT)/build
PREFIX ?= /usr/local
KDIR ?= /lib/modules/$(shell uname -r)/build
VM_KERNELS ?= 6.12 7.2
# check-module's part (tests/check-module.sh): all, native or cross
MODULE_PART ?= all
# The kernels that also run the user-space and SMB-stack suites.
USERSPACE_KERNELS ?= 7.2
export USERSPACE_KERNELS
# The kernels the Debian packages are installed for and booted on
# (tests/vm/deb-vm.sh): 7.2, and 6.12, Debian 13's.
DEB_KERNELS ?= 7.2 6.12
export DEB_KERNELS
# The test kernels booted with lockdep (the debug variant); the others boot
# the light variant. The kernel suites of SMP_KERNELS boot two CPUs
# (tests/vm/check-vm.sh).
LOCKDEP_KERNELS ?= 6.12
SMP_KERNELS ?= 7.2
export LOCKDEP_KERNELS SMP_KERNELS
# The version is MODULE_VERSION in kernel/main.c; dkms.conf repeats it as a
# literal (dh_dkms reads it with a regular expression) and check-module's
# module/version fails when the two differ.
VERSION := $(shell bash -c '. "$$1" && echo "$$PACKAGE_VERSION"' _ $(ROOT)/dkms.conf)
DKMS_SOURCE_TREE ?= /usr/src
RESULTS := $(BUILD)/results.txt
export SMBDIRECT_RESULTS := $(RESULTS)

# Compilers go through ccache when it is installed (make deps installs it):
# the cache lives with the project's others, paths under the tree are
# hashed relative to it, so a fresh clone anywhere reuses what an earlier
# build compiled. Only time depends on it, never a result.
# Depend mode: where the compiler writes its dependencies (-MD, as CMake,
# Kbuild and Samba's waf ask), ccache hashes the headers that file names
# instead of running the preprocessor a second time, so a miss costs what
# the compile costs. In preprocessor mode a miss cost Samba's -O0 compiles
# 55% more CPU than gcc alone (24 files: 13.3 s against 8.6 s), in depend
# mode nothing (7.6 s); the ASan C++ compiles 6% either way (2026-11-28).
# Where the compiler writes no dependencies, ccache falls back to the
# preprocessor mode by itself.
ifneq ($(wildcard /usr/lib/ccache/gcc),)
export PATH := /usr/lib/ccache:$(PATH)
export CCACHE_DIR ?= $(HOME)/.cache/smbdirect/ccache
export CCACHE_BASEDIR ?= $(ROOT)
export CCACHE_NOHASHDIR ?= 1
export CCACHE_MAXSIZE ?= 2G
export CCACHE_DEPEND ?= 1
endif

# One build directory per kernel: a tree of symlinks to the sources, so
# compile tests against several kernels never share objects.
sd_bdir = $(BUILD)/module/$(subst /,_,$(patsubst /%,%,$(1)))$(2)
MDIR = $(call sd_bdir,$(KDIR),$(if $(filter 1,$(SMBDIRECT_KUNIT)),-kunit))

.PHONY: all module modules install install-module install-userspace userspace uninstall \
	dkms-source dist deb samba clean deps demo check check-host check-module check-vm check-demo check-deb summary \
	results-reset help bench kunit docs check-docs

all module modules:
	@test -d $(KDIR) || { echo "KDIR=$(KDIR) does not exist: install the" \
		"headers for this kernel or pass KDIR=<kernel build dir>"; exit 1; }
	@$(ROOT)/tests/module-tree.sh $(ROOT) $(MDIR)
	$(MAKE) -C $(KDIR) M=$(MDIR) W=1 SMBDIRECT_KUNIT=$(SMBDIRECT_KUNIT) \
		SD_WERROR=$(if $(filter 1 ON yes,$(WERROR)),1,0) modules
	@echo "built $(MDIR)/af_smbdirect.ko against $(KDIR)"

# The module goes where the kernel's modules_install puts it (under DESTDIR
# when given); without a KDIR to build against it is skipped, loudly.
install: install-module install-userspace

install-module:
	@if [ -d $(KDIR) ]; then \
		$(MAKE) --no-print-directory module KDIR=$(KDIR) BUILD=$(BUILD) && \
		$(MAKE) -C $(KDIR) M=$(MDIR) $(if $(DESTDIR),INSTALL_MOD_PATH=$(DESTDIR)) \
			modules_install; \
	else \
		echo "install: KDIR=$(KDIR) does not exist: af_smbdirect.ko not" \
			"installed (pass KDIR=<kernel build dir>)"; \
	fi

# The source tree `dkms add af_smbdirect/VERSION` expects: dkms.conf and
# what Kbuild compiles, nothing else (no build products, no user space).
DKMS_DEST = $(DKMS_SOURCE_TREE)/af_smbdirect-$(VERSION)
dkms-source:
	@test -n "$(VERSION)" || { echo "dkms-source: no MODULE_VERSION in kernel/main.c"; exit 1; }
	@rm -rf "$(DKMS_DEST)" && mkdir -p "$(DKMS_DEST)" && cd $(ROOT) && \
		cp --parents dkms.conf Kbuild $$(find kernel uapi -type f \( -name '*.[ch]' \
			-o -name '*.cpp' -o -name '*.sh' \)) "$(DKMS_DEST)/"
	@echo "$(DKMS_DEST): dkms add af_smbdirect/$(VERSION)"

USERSPACE_BUILD := $(BUILD)/userspace/build
# CMake reads CFLAGS, CXXFLAGS and LDFLAGS from the environment but never
# CPPFLAGS, where dpkg-buildflags puts -D_FORTIFY_SOURCE: fold it in, as
# debhelper's cmake build does (only at the first configure of a build
# directory, as CMake reads them).
WERROR ?= 0
userspace:
	@mkdir -p $(BUILD)/userspace
	@CFLAGS="$(strip $(CPPFLAGS) $(CFLAGS))" CXXFLAGS="$(strip $(CPPFLAGS) $(CXXFLAGS))" \
	cmake -S $(ROOT)/userspace -B $(USERSPACE_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DSD_HOST_TESTS=OFF -DCMAKE_INSTALL_PREFIX=$(PREFIX) \
		-DSD_WERROR=$(if $(filter 1 ON yes,$(WERROR)),ON,OFF) \
		>$(BUILD)/userspace/configure.log 2>&1 || { cat $(BUILD)/userspace/configure.log; \
		echo "userspace: cmake could not configure: the package to install is named above" \
			"(make deps installs every one)"; \
		exit 1; }
	cmake --build $(USERSPACE_BUILD) -j $$(($$(nproc) + 1))

# Samba 4.22.6's smbd and smbclient with SMB-Direct and the RDMA channel of
# SMB2 READ/WRITE (userspace/samba: the patches, Samba's GPL-3.0-or-later),
# linked with this tree's libsmbdirect, installed for them under
# BUILD/samba/sdroot. Results: BUILD/samba/bin/{smbd,smbclient}.
samba: userspace
	@mkdir -p $(BUILD)/samba
	@cmake --install $(USERSPACE_BUILD) --prefix $(BUILD)/samba/sdroot \
		>$(BUILD)/samba/sdroot-install.log
	$(ROOT)/userspace/samba/build.sh $(BUILD)/samba $(BUILD)/samba/sdroot

# An installed /usr/local/lib library needs the linker cache refreshed.
install-userspace: userspace
	DESTDIR=$(DESTDIR) cmake --install $(USERSPACE_BUILD) --prefix $(PREFIX)
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then ldconfig; fi

# The user space: what cmake --install wrote (its install_manifest.txt),
# under the same DESTDIR. Directories are left: they may be shared. The
# module (make install-module) is the kernel's: modprobe -r, then remove
# af_smbdirect.ko from /lib/modules/VERSION and run depmod.
uninstall:
	@test -f $(USERSPACE_BUILD)/install_manifest.txt || { echo "uninstall:" \
		"$(USERSPACE_BUILD)/install_manifest.txt missing: run make install (same BUILD) first"; exit 1; }
	@while read -r f || [ -n "$$f" ]; do \
		[ -e "$(DESTDIR)$$f" ] || [ -L "$(DESTDIR)$$f" ] || continue; \
		rm -f "$(DESTDIR)$$f" && echo "removed $(DESTDIR)$$f"; \
	done <$(USERSPACE_BUILD)/install_manifest.txt
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then ldconfig; fi

deps:
	@$(ROOT)/tests/setup-deps.sh

# The release tarball, $(BUILD)/dist/smbdirect-VERSION.tar.xz: the files
# git tracks of the shipped tree and the tests (no .ci), under
# smbdirect-VERSION/; in a tree without git of its own (an unpacked
# tarball, even one unpacked inside a clone: no .git at its top) all its
# files. Reproducible: names sorted,
# every mtime the Debian changelog's date, owner root, modes u+rw,go=rX,
# single-threaded xz; two runs give the same bytes (host/dist-reproducible).
DIST_DIR = $(BUILD)/dist
DIST_FILES = Kbuild Makefile dkms.conf README.md kernel uapi userspace Documentation tests
DIST_TARBALL = $(DIST_DIR)/smbdirect-$(VERSION).tar.xz
CHANGELOG = $(ROOT)/userspace/packaging/debian/changelog
dist:
	@test -n "$(VERSION)" || { echo "dist: no PACKAGE_VERSION in dkms.conf"; exit 1; }
	@ts=$$(dpkg-parsechangelog -l $(CHANGELOG) -S Timestamp) && \
	 mkdir -p $(DIST_DIR) && rm -f $(DIST_TARBALL) && \
	 { if [ -e $(ROOT)/.git ]; then \
		git -C $(ROOT) ls-files -z -- $(DIST_FILES); \
	   else cd $(ROOT) && find $(DIST_FILES) -type f -print0; fi; } | LC_ALL=C sort -z | \
	 tar -C $(ROOT) --null -T - --sort=name --format=gnu \
		--mtime=@$$ts --owner=0 --group=0 --numeric-owner --mode=u+rw,go=rX \
		--transform='s,^,smbdirect-$(VERSION)/,' -cf - | \
		xz -6 -T1 -c >$(DIST_TARBALL).tmp && mv $(DIST_TARBALL).tmp $(DIST_TARBALL)
	@echo "$(DIST_TARBALL)"

# Debian packages: af-smbdirect-dkms, libsmbdirect0, libsmbdirect-dev,
# smbdirect-tools, and the source package, 3.0 (quilt). The top level
# belongs to Kbuild, so the packaging lives in userspace/packaging/debian/
# (changelog included): `make dist`'s tarball is the .orig.tar.xz, unpacked
# in $(BUILD)/deb/smbdirect-VERSION with that directory as its debian/, and
# dpkg-buildpackage -us -uc builds source and binaries there; lintian then
# judges the result (errors, warnings and info tags fail; tests/host/deb.sh
# fails pedantic ones too: lintian 2.116's --fail-on pedantic counts
# overridden tags). Everything lands in
# $(BUILD)/deb/. Needs debhelper, dh-dkms and lintian (make deps).
DEB_DIR = $(BUILD)/deb
DEB_TREE = $(DEB_DIR)/smbdirect-$(VERSION)
DEB_VERSION = $(shell dpkg-parsechangelog -l $(CHANGELOG) -S Version 2>/dev/null)
deb: dist
	@v='$(DEB_VERSION)'; [ "$${v%-*}" = "$(VERSION)" ] && [ "$$v" != "$(VERSION)" ] || \
		{ echo "deb: debian/changelog's version '$$v' is not $(VERSION)-REVISION"; exit 1; }
	@rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)
	@cp $(DIST_TARBALL) $(DEB_DIR)/smbdirect_$(VERSION).orig.tar.xz
	@tar -C $(DEB_DIR) -xf $(DEB_DIR)/smbdirect_$(VERSION).orig.tar.xz
	@cp -a $(DEB_TREE)/userspace/packaging/debian $(DEB_TREE)/debian
	cd $(DEB_TREE) && dpkg-buildpackage -us -uc
	lintian --fail-on error,warning,info --display-info --pedantic --display-experimental \
		$(DEB_DIR)/smbdirect_$(DEB_VERSION)_*.changes
	@ls $(DEB_DIR)/*.deb $(DEB_DIR)/*.dsc

results-reset:
	@mkdir -p $(BUILD) && : > $(RESULTS)

# Within make check's time budget the fuzzers get 30 s each (check-host
# alone: 60 s, or SMBDIRECT_FUZZ_SECONDS).
#
# The VM boots are make check's critical path: two TCG guests keep the
# machine's two cores busy for ~40 min. So nothing waits in front of them
# that need not: the host layer and, one after the other, the module
# layer's native part and the docs layer run beside the VM builds
# (check-vms.sh's prepare: test kernels, test modules, selftests, user
# space), at the same priority, into logs printed when the boots have
# ended; the module layer's cross part (two kernel trees to build on a
# machine without them) runs beside all of it at nice 19, on what the
# guests leave idle.
# The native part compiles in a build directory of its own
# (BUILD/module-layer), but for the test kernels' KUnit builds, which the
# VM phase needs too: those both compile in BUILD/module, under one lock
# per build directory, so each is compiled once (check-module.sh's
# compile). Test kernels both need are built once (build-kernel.sh's
# lock).
check: deps results-reset
	@rc=0; t0=$$(date +%s); mkdir -p $(BUILD)/logs; \
	( SMBDIRECT_FUZZ_SECONDS=$${SMBDIRECT_FUZZ_SECONDS:-30} \
		$(MAKE) --no-print-directory check-host NO_RESET=1; r=$$?; \
		echo "== host layer: ended $$(($$(date +%s) - t0)) s after the start"; exit $$r ) \
		>$(BUILD)/logs/layer-host.log 2>&1 & host=$$!; \
	( SD_SHARED_MODULE_BUILD=$(BUILD) \
		$(ROOT)/tests/check-module.sh $(ROOT) $(BUILD)/module-layer "$(VM_KERNELS)" native; r=$$?; \
		echo "== module layer, native part: ended $$(($$(date +%s) - t0)) s after the start"; \
		$(MAKE) --no-print-directory check-docs NO_RESET=1 || r=1; \
		echo "== docs layer: ended $$(($$(date +%s) - t0)) s after the start"; exit $$r ) \
		>$(BUILD)/logs/layer-module-docs.log 2>&1 & native=$$!; \
	nice -n 19 $(ROOT)/tests/check-module.sh $(ROOT) $(BUILD) "$(VM_KERNELS)" cross \
		>$(BUILD)/logs/module-cross-part.log 2>&1 & cross=$$!; \
	$(ROOT)/tests/vm/check-vms.sh $(ROOT) $(BUILD) "$(VM_KERNELS)" demo || rc=1; \
	wait $$host || rc=1; cat $(BUILD)/logs/layer-host.log; \
	wait $$native || rc=1; cat $(BUILD)/logs/layer-module-docs.log; \
	wait $$cross || rc=1; cat $(BUILD)/logs/module-cross-part.log; \
	echo "== module layer, cross part (nice 19): ended $$(($$(date +%s) - t0)) s after the start"; \
	$(ROOT)/tests/summary.sh $(RESULTS) || rc=1; \
	echo "== make check: $$(($$(date +%s) - t0)) s"; \
	exit $$rc

# Each layer also runs alone, with its own summary line.
sd_reset = $(if $(NO_RESET),,mkdir -p $(BUILD) && : > $(RESULTS) &&)
sd_summary = $(if $(NO_RESET),,; $(ROOT)/tests/summary.sh $(RESULTS) || rc=1)

check-host: $(if $(NO_RESET),,deps)
	@$(sd_reset) rc=0; \
	$(ROOT)/tests/host/check.sh $(ROOT) $(BUILD)/host || rc=1 $(sd_summary); \
	exit $$rc

check-module: $(if $(NO_RESET),,deps)
	@$(sd_reset) rc=0; \
	$(ROOT)/tests/check-module.sh $(ROOT) $(BUILD) "$(VM_KERNELS)" $(MODULE_PART) || rc=1 $(sd_summary); \
	exit $$rc

# Documentation/ rendered (make docs) and the UAPI reference complete.
check-docs: $(if $(NO_RESET),,deps)
	@$(sd_reset) rc=0; \
	$(ROOT)/tests/docs.sh $(ROOT) $(BUILD) || rc=1 $(sd_summary); \
	exit $$rc

check-vm: $(if $(NO_RESET),,deps)
	@$(sd_reset) rc=0; \
	$(ROOT)/tests/vm/check-vms.sh $(ROOT) $(BUILD) "$(VM_KERNELS)" || rc=1 $(sd_summary); \
	exit $$rc

# `make demo` as a fresh clone runs it: into a build directory that does
# not exist yet. make check runs it beside the VM boots (check-vms.sh).
check-demo: $(if $(NO_RESET),,deps)
	@$(sd_reset) rc=0; \
	rm -rf $(BUILD)/demo-fresh; \
	if $(MAKE) --no-print-directory demo BUILD=$(BUILD)/demo-fresh \
			>$(BUILD)/demo-fresh.log 2>&1; then \
		echo "pass demo/make-demo-fresh-build" >>$(RESULTS); \
		tail -n 1 $(BUILD)/demo-fresh.log; \
	else \
		echo "fail demo/make-demo-fresh-build" >>$(RESULTS); \
		tail -n 40 $(BUILD)/demo-fresh.log; rc=1; \
	fi $(sd_summary); \
	exit $$rc

# The Debian packages from build to purge (tests/vm/deb-vm.sh): make
# check runs it as a VM boot beside the others (check-vms.sh's "deb").
check-deb: $(if $(NO_RESET),,deps)
	@$(sd_reset) rc=0; \
	$(ROOT)/tests/vm/deb-vm.sh $(ROOT) $(BUILD) "$(DEB_KERNELS)" || rc=1 $(sd_summary); \
	exit $$rc

# Debian's Sphinx (python3-sphinx, make deps): every warning is an error,
# every page is read afresh (-E), so a warning is never hidden by a build
# that reused an earlier run's environment.
SPHINXBUILD ?= sphinx-build
docs:
	$(SPHINXBUILD) -W --keep-going -E -b html $(ROOT)/Documentation $(BUILD)/docs/html

# The KUnit suites alone, their KTAP on stdout and nothing else there (make
# -s, or --no-print-directory with -C): VM_KERNELS each in one VM boot, or,
# with KDIR= given, the KUnit build for that tree (a CI lab loads it on its
# own kernel with tests/kunit/ktap.sh; here when KDIR is the running one).
kunit:
	@$(ROOT)/tests/setup-deps.sh >&2
	@$(ROOT)/tests/kunit/run.sh $(ROOT) $(BUILD) "$(VM_KERNELS)" \
		$(if $(filter command line environment,$(origin KDIR)),$(KDIR))

bench: deps
	@$(ROOT)/tests/bench/run.sh $(ROOT) $(BUILD)

demo: deps
	@$(ROOT)/tests/vm/demo.sh $(ROOT) $(BUILD)

clean:
	rm -rf $(BUILD)

help:
	@awk 'NR >= 3 && !/^#/ { exit } NR >= 3' $(ROOT)/Makefile
endif
