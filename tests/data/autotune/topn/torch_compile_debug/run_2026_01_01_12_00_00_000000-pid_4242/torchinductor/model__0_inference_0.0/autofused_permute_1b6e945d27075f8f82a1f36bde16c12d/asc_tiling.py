from autofuse.compile_adapter import host_compile

tiling_def = r'''TilingData(tile_len=256, ub_size=32768, tail_len=64)'''
host_compile(tiling_def)
