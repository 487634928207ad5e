from autofuse.compile_adapter import kernel_compile

tiling_def = r'''TilingData(tile_len=128, ub_size=16384, tail_len=32)'''
kernel_key = 'deb9ddda84beaf56633e5f7a814fd0c0'
kernel_compile(tiling_def)
