from autofuse.compile_adapter import host_compile

tiling_def = r'''TilingData(tile_len=128, ub_size=16384, tail_len=32)'''
host_compile(tiling_def)
