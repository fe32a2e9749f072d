def test(:
