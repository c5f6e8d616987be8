"""The bottom layer of the rules: state, events, commands, prompts, rejections, draws, and the phase contract.

Nothing here knows a rule of the game; everything above imports from here.
"""
