"""Unigine MESH (ms11) and ANIM (an10): codecs and neutral-scene conversion."""
