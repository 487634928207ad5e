from autofuse.compile_adapter import kernel_compile

tiling_def = r'''TilingData(tile_len=64, ub_size=8192, tail_len=16)'''
kernel_key = '66db649cdeed16b050bbe8fb8ca36a69'
kernel_compile(tiling_def)
