import os

def test():
    return os.path.exists('marker.txt')

def half():
    return 0.5

def big():
    return 7
