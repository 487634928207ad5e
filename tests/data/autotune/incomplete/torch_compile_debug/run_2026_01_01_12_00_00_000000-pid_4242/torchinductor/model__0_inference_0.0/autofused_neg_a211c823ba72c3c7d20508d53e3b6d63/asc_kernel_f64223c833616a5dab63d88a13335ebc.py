from autofuse.compile_adapter import kernel_compile

tiling_def = r'''TilingData(tile_len=128, ub_size=16384, tail_len=32)'''
kernel_key = 'f64223c833616a5dab63d88a13335ebc'
kernel_compile(tiling_def)
