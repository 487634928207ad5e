from autofuse.compile_adapter import host_compile

tiling_def = r'''TilingData(tile_len=512, ub_size=65536, tail_len=128)'''
host_compile(tiling_def)
