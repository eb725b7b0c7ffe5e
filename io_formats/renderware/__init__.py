"""RenderWare clumps (.dff) of GTA III, Vice City and San Andreas: Skin and HAnim PLGs."""
