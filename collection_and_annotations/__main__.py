from collection_and_annotations.cli import main

main()
