// tiling wrapper of autofused_add_erf_mul_6c45c98e7c34cea7e25bb5b91419f621
extern "C" int tiling(void* tiling_data, int* block_dim);
