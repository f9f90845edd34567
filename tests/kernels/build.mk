# `make test-kernels`: the integration tests of tests/kernels/tests inside Debian's stock
# kernels (bookworm's 6.1 and 6.12, fetched into build/kernels/, booted under QEMU with this
# machine's files shared over 9p). KERNELS="PACKAGE ..." picks others.
.PHONY: test-kernels

test-kernels:
	@scripts/deps.sh kernels
	$(MAKE) all $(ITESTS)
	@scripts/test-kernels.sh $(KERNELS)
