// tiling wrapper of autofused_permute_1b6e945d27075f8f82a1f36bde16c12d
extern "C" int tiling(void* tiling_data, int* block_dim);
