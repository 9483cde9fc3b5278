/* tests/unit/test_vnet_offload.c on packed rings (virtio 1.2 s2.8). */
#define TEST_PACKED 1
#include "test_vnet_offload.c"
