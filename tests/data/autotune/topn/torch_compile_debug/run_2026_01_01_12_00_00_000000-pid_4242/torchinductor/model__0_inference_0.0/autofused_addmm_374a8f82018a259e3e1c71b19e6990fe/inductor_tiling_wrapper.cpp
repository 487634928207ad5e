// tiling wrapper of autofused_addmm_374a8f82018a259e3e1c71b19e6990fe
extern "C" int tiling(void* tiling_data, int* block_dim);
