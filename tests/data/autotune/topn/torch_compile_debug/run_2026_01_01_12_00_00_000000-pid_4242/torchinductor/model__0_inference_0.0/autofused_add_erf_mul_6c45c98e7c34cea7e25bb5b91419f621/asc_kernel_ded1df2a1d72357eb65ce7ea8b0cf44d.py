from autofuse.compile_adapter import kernel_compile

tiling_def = r'''TilingData(tile_len=1024, ub_size=131072, tail_len=256)'''
kernel_key = 'ded1df2a1d72357eb65ce7ea8b0cf44d'
kernel_compile(tiling_def)
