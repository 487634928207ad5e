from autofuse.compile_adapter import kernel_compile

tiling_def = r'''TilingData(tile_len=256, ub_size=32768, tail_len=64)'''
kernel_key = '2ca4397f1ddf3200fa5362e675280a7b'
kernel_compile(tiling_def)
