from autofuse.compile_adapter import host_compile

tiling_def = r'''TilingData(tile_len=64, ub_size=8192, tail_len=16)'''
host_compile(tiling_def)
