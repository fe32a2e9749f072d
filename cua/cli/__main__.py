from cua.cli import main

main()
